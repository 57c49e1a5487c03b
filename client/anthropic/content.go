// Package anthropic reads what Anthropic's Messages API sends and receives:
// request bodies, responses and logs of both (Conversation), and recorded
// event streams (Decoder). The stream Decoder is stateful and reusable by
// anything that carries the API's stream events (Claude Code's
// stream-json, a live backend).
package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/jsonx"
	"github.com/perch-tui/perch/internal/recent"
)

// AssistantEvent reads the content of an assistant message (a string or a
// list of content blocks) into an assistant turn: text, thinking and tool
// calls. Usage and stop reason are the caller's.
func AssistantEvent(id string, content json.RawMessage) events.Event {
	return assistantFrom(id, ParseContent(content))
}

// ParseContent reads a message's content, a string or a list of blocks.
// The text blocks of a list are paragraphs of their own: they are joined
// with a newline, not run together (so is the thinking).
func ParseContent(raw json.RawMessage) normalize.Content {
	l := normalize.AsList(raw)
	if l == nil {
		return normalize.ParseContent(raw)
	}
	var c normalize.Content
	for _, b := range l {
		JoinPart(&c, ParsePart(b))
	}
	return c
}

// ParsePart reads one block of a message's content as normalize.ParsePart
// does, except where the Messages API says more: a tool result's parts
// stay paragraphs of their own (not run together), and the server's own
// tools (server_tool_use, mcp_tool_use and their *_tool_result blocks: web
// search, web fetch, code execution, …) are the calls and results they
// are, not placeholders folded into the reply's text.
func ParsePart(raw json.RawMessage) normalize.Content {
	o := normalize.AsObjectShared(raw)
	typ := normalize.StrField(o, "type")
	switch {
	case typ == "tool_result":
		c := normalize.ParsePart(raw)
		if len(c.Results) == 1 && normalize.AsListShared(o["content"]) != nil {
			c.Results[0].Text = ParseContent(o["content"]).Text
		}
		return c
	case typ == "server_tool_use" || typ == "mcp_tool_use":
		name := normalize.StrField(o, "name")
		if srv := normalize.StrField(o, "server_name"); srv != "" {
			name = srv + "." + name
		}
		return normalize.Content{ToolCalls: []events.ToolCall{
			events.NewToolCall(normalize.StrField(o, "id"), name, o["input"])}}
	case o != nil && !knownBlock(typ):
		return normalize.Content{} // named by UnknownBlocks, not folded into the text
	case strings.HasSuffix(typ, "_tool_result"):
		text, isErr := serverResult(o["content"])
		if v, ok := normalize.Bool(o["is_error"]); ok && v {
			isErr = true
		}
		return normalize.Content{Results: []normalize.Result{{CallID: normalize.StrField(o, "tool_use_id"),
			Text: text, IsError: isErr, Known: true}}}
	}
	return normalize.ParsePart(raw)
}

// knownBlock says whether perch reads a content block of this type.
func knownBlock(typ string) bool {
	switch typ {
	case "", "text", "input_text", "output_text", "thinking", "reasoning", "reasoning.text", "reasoning.summary",
		"redacted_thinking", "reasoning.encrypted", "refusal", "image", "image_url", "input_image",
		"tool_use", "server_tool_use", "mcp_tool_use", "tool_result", "document", "file", "input_file",
		"input_audio", "audio":
		return true
	}
	return strings.HasSuffix(typ, "_tool_result")
}

// UnknownBlocks names the types of the blocks of a content list that perch
// does not read (a block type newer than perch), each once.
func UnknownBlocks(blocks []json.RawMessage) []string {
	var out []string
	for _, b := range blocks {
		typ := normalize.StrField(normalize.AsObjectShared(b), "type")
		if typ == "" || knownBlock(typ) || slices.Contains(out, typ) {
			continue
		}
		out = append(out, typ)
	}
	return out
}

// UnknownBlockNotice says that a reply holds blocks perch does not show.
func UnknownBlockNotice(types []string) events.Event {
	return Notice(events.LevelInfo, events.NoticeInfo,
		"The reply holds content perch does not know, not shown: "+strings.Join(types, ", "))
}

// serverResult reads what a server tool returned: search results (a title
// and address a line), a command's output, an error's code.
func serverResult(raw json.RawMessage) (string, bool) {
	if o := normalize.AsObjectShared(raw); o != nil {
		typ := normalize.StrField(o, "type")
		if strings.HasSuffix(typ, "_error") {
			return strings.TrimSpace(typ + ": " + normalize.FirstStr(o, "error_code", "message")), true
		}
		text := normalize.StrField(o, "stdout") + normalize.StrField(o, "stderr")
		if text == "" {
			text = normalize.ParseContent(o["content"]).Text
		}
		if text == "" {
			text = normalize.Excerpt(raw)
		}
		code, ok := normalize.Int(o["return_code"])
		return text, ok && code != 0
	}
	if l := normalize.AsListShared(raw); l != nil {
		lines := make([]string, 0, len(l))
		for _, item := range l {
			io := normalize.AsObjectShared(item)
			line := strings.TrimSpace(normalize.StrField(io, "title") + " " + normalize.StrField(io, "url"))
			if line == "" {
				line = ParsePart(item).Text
			}
			if line != "" {
				lines = append(lines, line)
			}
		}
		return strings.Join(lines, "\n"), false
	}
	return normalize.Str(raw), false
}

// ServerResults are the results a reply holds beside their calls (the
// server's own tools), as the tool results of those calls.
func ServerResults(c normalize.Content) []events.Event {
	if len(c.Results) == 0 {
		return nil
	}
	names := make(map[string]string, len(c.ToolCalls))
	for _, tc := range c.ToolCalls {
		names[tc.ID] = tc.Name
	}
	out := make([]events.Event, 0, len(c.Results))
	for _, r := range c.Results {
		out = append(out, ToolResultEvent(r, names[r.CallID]))
	}
	return out
}

// JoinPart adds one block's part to c, a newline between texts (and
// between thinking) unless one is there already.
func JoinPart(c *normalize.Content, p normalize.Content) {
	c.Text += separator(c.Text, p.Text)
	c.Thinking += separator(c.Thinking, p.Thinking)
	c.Join(p)
}

// separator is what goes between two paragraphs a and b: a newline when
// both have text and neither has one at the seam.
func separator(a, b string) string {
	if a == "" || b == "" || strings.HasSuffix(a, "\n") || strings.HasPrefix(b, "\n") {
		return ""
	}
	return "\n"
}

// assistantFrom is AssistantEvent of content read already.
func assistantFrom(id string, c normalize.Content) events.Event {
	return events.Event{Kind: events.KindAssistantMessage, ID: id, Text: c.Text,
		Thinking: c.Thinking, ToolCalls: c.ToolCalls}
}

// UserEvents reads the content of a user message: each tool_result block
// becomes a tool result (named after its call when tools knows it), and
// what else the message holds (text, images, documents) one user turn with
// the given id. A message of tool results only makes no user turn.
func UserEvents(id string, content json.RawMessage, tools *Tools) []events.Event {
	return userFrom(id, ParseContent(content), tools)
}

// userFrom is UserEvents of content read already.
func userFrom(id string, c normalize.Content, tools *Tools) []events.Event {
	var out []events.Event
	for _, r := range c.Results {
		out = append(out, ToolResultEvent(r, tools.Name(r.CallID)))
	}
	if c.Text != "" || len(c.Results) == 0 {
		out = append(out, events.Event{Kind: events.KindUserMessage, ID: id, Text: c.Text})
	}
	// Tool calls and thinking have no place in a user message; say so
	// rather than drop them.
	for _, tc := range c.ToolCalls {
		out = append(out, Notice(events.LevelWarning, events.NoticeError,
			fmt.Sprintf("a user message holds a tool_use block (%s %s); it is not shown as a call", tc.Name, tc.ID)))
	}
	return out
}

// ToolResultEvent is the tool result of a tool_result block.
func ToolResultEvent(r normalize.Result, name string) events.Event {
	res := &events.ToolResult{Text: r.Text, IsError: r.IsError}
	if r.IsError {
		res.ErrorText = r.Text
	}
	return events.Event{Kind: events.KindPostToolCall, Tool: &events.ToolEvent{
		Call: events.ToolCall{ID: r.CallID, Name: name}, Name: name, Result: res}}
}

// Tools remembers the names of the latest tool calls by id, so that a
// result (which carries only the id) can be named. A result answers a call
// of its own turn or one shortly before (subagent lines name their call
// for a while after), so the latest recent.Window calls at least are kept, not
// every call of a day-long session: a result for a call older than that is
// shown without its name, as one for an unknown call. The zero value is
// ready to use.
type Tools struct{ names *recent.Map[string] }

// Note records the calls of an assistant turn.
func (t *Tools) Note(calls []events.ToolCall) {
	for _, c := range calls {
		if c.ID == "" {
			continue
		}
		if t.names == nil {
			t.names = recent.New[string](recent.Window)
		}
		t.names.Put(c.ID, c.Name)
	}
}

// Name is the name of the call id ("" when unknown or forgotten).
func (t *Tools) Name(id string) string {
	if t == nil || t.names == nil {
		return ""
	}
	name, _ := t.names.Get(id)
	return name
}

// Notice builds a notice event.
func Notice(level events.NoticeLevel, kind, text string) events.Event {
	return events.Event{Kind: events.KindNotice, Level: level, NoticeKind: kind, Text: text}
}

// BadRecord is the warning for a record that does not decode: its
// position, why, and a bounded excerpt.
func BadRecord(pos string, raw []byte, why string) events.Event {
	return Notice(events.LevelWarning, events.NoticeError,
		At(pos, why+": "+events.Excerpt(bytes.TrimSpace(raw), 120)))
}

// At prefixes text with a position ("line 12: …") when there is one.
func At(pos, text string) string {
	if pos == "" {
		return text
	}
	return pos + ": " + text
}

// Clean makes raw valid UTF-8: invalid bytes (which can only stand inside
// JSON strings) become U+FFFD, so that values kept raw (tool arguments)
// are as clean as decoded strings. Valid input is returned as is.
func Clean(raw []byte) []byte {
	if utf8.Valid(raw) {
		return raw
	}
	return bytes.ToValidUTF8(raw, []byte("\uFFFD"))
}

// Marshal is json.Marshal without HTML escaping ("&&" stays "&&" in
// arguments rebuilt from raw blocks).
func Marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("null")
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// Object decodes one record as a JSON object, after Clean. ok is false
// when it is not one; why then says what it is.
func Object(raw []byte) (o normalize.Object, why string) { return object(raw, normalize.AsObject) }

// ObjectInPlace is Object without the copy: the values share raw's memory
// (or that of its cleaned copy), for a caller that copies what it keeps.
func ObjectInPlace(raw []byte) (o normalize.Object, why string) {
	return object(raw, normalize.AsObjectShared)
}

func object(raw []byte, split func(json.RawMessage) normalize.Object) (o normalize.Object, why string) {
	raw = bytes.TrimSpace(Clean(raw))
	if len(raw) == 0 {
		return nil, "empty"
	}
	if o = split(raw); o != nil {
		return o, ""
	}
	if !jsonx.Valid(raw) {
		return nil, "not JSON"
	}
	return nil, "not a JSON object"
}
