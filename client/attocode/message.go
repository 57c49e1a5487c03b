package attocode

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/idset"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/internal/recent"
)

// One conversation message, as both implementations store it:
//
//	Python:     {"role", "content"?, "tool_calls"?: [{"id","name","arguments"}], "tool_call_id"?}
//	TypeScript: {"role", "content", "toolCalls"?: […], "toolResults"?: [{"callId","result","error"?}],
//	             "toolCallId"?, "metadata"?: {"thinking"?, …}}
//
// Either spelling is accepted in either file, and OpenAI-shaped tool calls
// ({"function":{"name","arguments"}}) too: a Python message that was a
// plain dict is stored as it was.

// messages holds what the message reader remembers across messages.
type messages struct {
	n int // messages read, for synthesized ids
	// names are the tool names of the latest calls, by call id, for their
	// results (which come soon after: the entry, then the tool message).
	names *recent.Map[string]
	// last is the last result of each of the lastMax most recent calls,
	// by call id; lastOrder holds their ids, oldest first.
	last      map[string]*events.ToolResult
	lastOrder []string
	// summaries are the compaction summaries shown (hashed).
	summaries idset.Set
	talked    bool // a user or assistant message was seen
}

func newMessages() *messages {
	return &messages{names: recent.New[string](recent.Window), last: map[string]*events.ToolResult{}}
}

// message turns one message into events. pos names it in notices.
func (m *messages) message(pos string, raw json.RawMessage) []events.Event {
	m.n++
	id := "msg-" + strconv.Itoa(m.n)
	o := normalize.AsObjectShared(raw)
	if o == nil {
		return []events.Event{badRecord(pos, raw, "not a message object")}
	}
	role := strings.ToLower(strings.TrimSpace(normalize.StrField(o, "role")))
	role = strings.TrimPrefix(role, "role.") // an enum printed with its class
	c := readContent(o["content"])
	switch role {
	case "user", "human":
		m.talked = true
		if kind := hostKind(c.Text); kind != "" && len(c.Results) == 0 {
			return m.hostNotice(id, kind, c.Text)
		}
		var out []events.Event
		if c.Text != "" || (len(c.Results) == 0 && len(toolResults(o)) == 0) {
			out = append(out, events.Event{Kind: events.KindUserMessage, ID: id, Text: c.Text})
		}
		out = append(out, m.blockResults(c.Results)...)
		return append(out, m.results(o)...)
	case "assistant", "model", "ai":
		m.talked = true
		ev := events.Event{Kind: events.KindAssistantMessage, ID: id, Text: c.Text, Thinking: c.Thinking}
		ev.Thinking += thinkingOf(o)
		ev.ToolCalls = append(m.calls(id, o), c.ToolCalls...)
		for _, tc := range c.ToolCalls {
			m.names.Put(tc.ID, tc.Name)
		}
		ev.Usage = normalize.Usage(o["usage"])
		if ev.Usage == nil {
			if md := normalize.AsObjectShared(o["metadata"]); md != nil {
				ev.Usage = normalize.Usage(md["usage"])
			}
		}
		ev.StopReason = normalize.Stop(normalize.FirstStr(o, "stopReason", "stop_reason", "finish_reason"))
		return append([]events.Event{ev}, m.results(o)...)
	case "tool", "function":
		callID := normalize.FirstStr(o, "tool_call_id", "toolCallId", "call_id", "callId")
		name, _ := m.names.Get(callID)
		if name == "" {
			name = normalize.FirstStr(o, "name", "toolName", "tool_name")
		}
		res := &events.ToolResult{Text: c.Text}
		if r, ok := outcome(c.Text); ok {
			res = r
		}
		if bad, text := errorOf(o["error"]); bad {
			res.IsError, res.ErrorText = true, text
		}
		if v, ok := normalize.Bool(o["is_error"]); ok && !res.IsError {
			res.IsError = v
		}
		res = m.remember(callID, res)
		return []events.Event{{Kind: events.KindPostToolCall, ID: id,
			Tool: &events.ToolEvent{Call: events.ToolCall{ID: callID, Name: name}, Name: name, Result: res}}}
	case "system", "developer":
		if !m.talked {
			// The system prompt: perch keeps its size, not its text.
			return []events.Event{{Kind: events.KindSystemMessage, ID: id, Text: c.Text}}
		}
		kind := hostKind(c.Text)
		if kind == "" {
			kind = events.NoticeSystem
		}
		return m.hostNotice(id, kind, c.Text)
	}
	why := "a message with no role"
	if role != "" {
		why = "a message of unknown role " + strconv.Quote(events.Excerpt([]byte(role), 40))
	}
	return []events.Event{badRecord(pos, raw, why)}
}

// The agents write their own notes into the conversation as user (or
// system) messages: nudges, loop warnings, status recitations, compaction
// summaries. They are not the user's words; they show as notices.
var hostPrefixes = []struct{ prefix, kind string }{
	{"[System:", events.NoticeSystem},
	{"[System]", events.NoticeSystem},
	{"[System Notice]", events.NoticeSystem},
	{"[Status Recitation]", events.NoticeSystem},
	{"[Reflection feedback]", events.NoticeSystem},
	{"[CONTEXT REDUCED", events.NoticeContext},
	{summaryPrefix, events.NoticeContext},
	{"The conversation context has been compacted.", events.NoticeContext},
}

const summaryPrefix = "[Previous conversation summary]"

// hostKind is the notice kind of a message the agent wrote, "" for
// anything else.
func hostKind(text string) string {
	for _, p := range hostPrefixes {
		if strings.HasPrefix(text, p.prefix) {
			return p.kind
		}
	}
	return ""
}

// hostNotice shows a message the agent wrote as a notice. A compaction
// summary that a compaction entry already showed is not shown again.
func (m *messages) hostNotice(id, kind, text string) []events.Event {
	if s, ok := strings.CutPrefix(text, summaryPrefix); ok && m.summaries.Has(strings.TrimSpace(s)) {
		return nil
	}
	return []events.Event{{Kind: events.KindNotice, ID: id, Level: events.LevelInfo, NoticeKind: kind,
		Text: events.Bound(text)}}
}

// readContent reads a message's content: a string (a Python-printed list
// of content blocks is read as those blocks, see reprBlocks), or any JSON
// content shape.
func readContent(raw json.RawMessage) normalize.Content {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		s := normalize.Str(raw)
		if strings.Contains(s, "Block(") {
			if parts, ok := reprBlocks(s); ok {
				return normalize.ParseContent(parts)
			}
		}
		return normalize.Content{Text: s}
	}
	return normalize.ParseContent(raw)
}

func thinkingOf(o normalize.Object) string {
	t := normalize.FirstStr(o, "thinking", "reasoning_content", "reasoning")
	if md := normalize.AsObjectShared(o["metadata"]); md != nil {
		t += normalize.FirstStr(md, "thinking", "reasoning")
	}
	return t
}

// calls reads the tool calls of an assistant message.
func (m *messages) calls(msgID string, o normalize.Object) []events.ToolCall {
	list := normalize.AsListShared(o["tool_calls"])
	if list == nil {
		list = normalize.AsListShared(o["toolCalls"])
	}
	out := make([]events.ToolCall, 0, len(list))
	for i, raw := range list {
		tc := m.call(raw)
		if tc.ID == "" {
			tc.ID = msgID + ":" + strconv.Itoa(i)
		}
		m.names.Put(tc.ID, tc.Name)
		out = append(out, tc)
	}
	return out
}

// call reads one tool call, flat ({"id","name","arguments"}) or OpenAI
// shaped ({"id","function":{"name","arguments"}}).
func (m *messages) call(raw json.RawMessage) events.ToolCall {
	tc := normalize.AsObjectShared(raw)
	if tc == nil {
		return events.NewToolCall("", "", raw)
	}
	id := normalize.FirstStr(tc, "id", "call_id", "callId", "tool_call_id")
	name := normalize.FirstStr(tc, "name", "toolName", "tool_name")
	args, ok := tc["arguments"]
	if !ok {
		args, ok = tc["input"]
	}
	if fn := normalize.AsObjectShared(tc["function"]); fn != nil {
		if name == "" {
			name = normalize.StrField(fn, "name")
		}
		if !ok {
			args = fn["arguments"]
		}
	}
	c := events.NewToolCall(id, name, args)
	if c.ArgsErr == "" {
		c.ArgsErr = normalize.FirstStr(tc, "parseError", "parse_error")
	}
	return c
}

func toolResults(o normalize.Object) []json.RawMessage {
	if l := normalize.AsListShared(o["toolResults"]); l != nil {
		return l
	}
	return normalize.AsListShared(o["tool_results"])
}

// results reads a message's toolResults: [{callId, result, error?}].
func (m *messages) results(o normalize.Object) []events.Event {
	var out []events.Event
	for _, raw := range toolResults(o) {
		r := normalize.AsObjectShared(raw)
		if r == nil {
			continue
		}
		out = append(out, m.result(normalize.FirstStr(r, "callId", "call_id", "tool_call_id", "toolCallId"), r))
	}
	return out
}

// result is a tool result {result, error?}: result is text or any JSON
// value (shown as compact JSON); a non-empty error marks it failed.
func (m *messages) result(callID string, r normalize.Object) events.Event {
	name, _ := m.names.Get(callID)
	var res *events.ToolResult
	ro := normalize.AsObjectShared(r["result"])
	if o, ok := outcomeOf(ro); ro != nil && ok {
		res = o
	} else {
		res = &events.ToolResult{Text: valueText(r["result"])}
		if ro != nil {
			res.ExitCode = exitCode(ro)
		}
	}
	if bad, text := errorOf(r["error"]); bad {
		res.IsError, res.ErrorText = true, text
	}
	res = m.remember(callID, res)
	return events.Event{Kind: events.KindPostToolCall,
		Tool: &events.ToolEvent{Call: events.ToolCall{ID: callID, Name: name}, Name: name, Result: res}}
}

// outcome reads a tool's outcome written as JSON text, as the TypeScript
// agent stores it in a tool message: {"success", "output", "metadata"?}.
// Only that shape is taken; other text stays text.
func outcome(text string) (*events.ToolResult, bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "{") || !strings.Contains(t, `"success"`) {
		return nil, false
	}
	o := normalize.AsObjectShared(ingest.Repair([]byte(t)))
	if o == nil {
		return nil, false
	}
	return outcomeOf(o)
}

// outcomeOf reads {"success": bool, "output": text, "metadata":
// {"exitCode"}?}, the TypeScript tools' result.
func outcomeOf(o normalize.Object) (*events.ToolResult, bool) {
	ok, known := normalize.Bool(o["success"])
	out, isText := o["output"]
	if !known || !isText || (len(bytes.TrimSpace(out)) > 0 && bytes.TrimSpace(out)[0] != '"') {
		return nil, false
	}
	res := &events.ToolResult{Text: normalize.Str(out), IsError: !ok}
	res.ExitCode = exitCode(o)
	if md := normalize.AsObjectShared(o["metadata"]); md != nil && res.ExitCode == nil {
		res.ExitCode = exitCode(md)
	}
	if res.IsError {
		if e := normalize.StrField(o, "error"); e != "" {
			res.ErrorText = e
		}
	}
	return res, true
}

// remember keeps the last result of each call. A later report of the same
// result (a tool message after a tool_result entry) that knows less keeps
// what the earlier one knew: a failure, an exit code, the output.
func (m *messages) remember(callID string, res *events.ToolResult) *events.ToolResult {
	if callID == "" {
		return res
	}
	if prev := m.last[callID]; prev != nil {
		if prev.IsError && !res.IsError {
			res.IsError, res.ErrorText = true, prev.ErrorText
		}
		if res.ExitCode == nil {
			res.ExitCode = prev.ExitCode
		}
		if res.Text == "" {
			res.Text = prev.Text
		}
	}
	if _, ok := m.last[callID]; !ok {
		m.lastOrder = append(m.lastOrder, callID)
		if len(m.lastOrder) > lastMax {
			delete(m.last, m.lastOrder[0])
			m.lastOrder = m.lastOrder[1:]
		}
	}
	m.last[callID] = res
	return res
}

// lastMax is how many calls' results remember keeps. A result is
// reported again soon after it is first (the tool message of the same
// turn); keeping every one would keep every output of a session in
// memory, which the timeline keeps on disk.
const lastMax = 256

// blockResults are Anthropic tool_result blocks found in content.
func (m *messages) blockResults(rs []normalize.Result) []events.Event {
	out := make([]events.Event, 0, len(rs))
	for _, r := range rs {
		name, _ := m.names.Get(r.CallID)
		out = append(out, events.Event{Kind: events.KindPostToolCall, Tool: &events.ToolEvent{
			Call: events.ToolCall{ID: r.CallID, Name: name}, Name: name,
			Result: m.remember(r.CallID, &events.ToolResult{Text: r.Text, IsError: r.IsError})}})
	}
	return out
}

// errorOf reads an error field: a message string, an error object
// ({"message"}), or a boolean; null, absent, "" and false are no error.
func errorOf(raw json.RawMessage) (bool, string) {
	if normalize.IsNull(raw) {
		return false, ""
	}
	if s := normalize.Str(raw); s != "" {
		return true, s
	}
	if o := normalize.AsObjectShared(raw); o != nil {
		if s := normalize.FirstStr(o, "message", "error", "name"); s != "" {
			return true, s
		}
		return true, valueText(raw)
	}
	v, _ := normalize.Bool(raw)
	return v, ""
}

// exitCode reads an exit status a result object reports (nil when none).
func exitCode(o normalize.Object) *int {
	for _, k := range []string{"exit_code", "exitCode", "returncode", "return_code"} {
		if v, ok := normalize.Int(o[k]); ok && v >= -1<<31 && v < 1<<31 {
			n := int(v)
			return &n
		}
	}
	return nil
}

// valueText is a JSON value as text: a string as itself, null as "",
// anything else as compact JSON.
func valueText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if normalize.IsNull(raw) {
		return ""
	}
	if raw[0] == '"' {
		return normalize.Str(raw)
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return string(raw)
}

// badRecord is the notice for a record that does not decode.
func badRecord(pos string, raw []byte, why string) events.Event {
	return events.Event{Kind: events.KindNotice, Level: events.LevelWarning, NoticeKind: events.NoticeError,
		Text: pos + ": " + why + ": " + events.Excerpt(bytes.TrimSpace(raw), 120)}
}

// notice is an informational notice.
func notice(kind, text string) events.Event {
	return events.Event{Kind: events.KindNotice, Level: events.LevelInfo, NoticeKind: kind, Text: events.Bound(text)}
}
