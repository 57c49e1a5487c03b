package normalize

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/jsonx"
)

// Content is message content of any shape, read into what perch shows.
type Content struct {
	// Text is the text parts in order, with a short placeholder for parts
	// that are not text ("[image/png 34 KB]", "[document]", an unknown
	// block's type) so nothing is dropped silently and no base64 shows.
	Text string
	// Thinking is the reasoning blocks in order ("[redacted]" for
	// redacted or encrypted ones).
	Thinking string
	// ToolCalls are tool_use blocks (Anthropic), in order.
	ToolCalls []events.ToolCall
	// Results are tool_result blocks (Anthropic, in user messages).
	Results []Result
}

// Result is a tool_result block.
type Result struct {
	CallID string
	Text   string
	// IsError is the block's is_error; Known says it was given.
	IsError bool
	Known   bool
}

// ParseContent reads content as a plain string, a list of strings, a list
// of typed or untyped parts (OpenAI, Anthropic, maria), a single part
// object, or null.
func ParseContent(raw json.RawMessage) Content {
	var c Content
	c.add(raw)
	return c
}

// ParsePart reads one element of a content list as ParseContent reads
// each: ParseContent of a list is its elements' ParsePart joined (Join).
func ParsePart(raw json.RawMessage) Content {
	var c Content
	c.part(raw)
	return c
}

// Join appends d: its text and thinking to c's, its calls and results after
// c's.
func (c *Content) Join(d Content) {
	c.Text += d.Text
	c.Thinking += d.Thinking
	c.ToolCalls = append(c.ToolCalls, d.ToolCalls...)
	c.Results = append(c.Results, d.Results...)
}

func (c *Content) add(raw json.RawMessage) {
	if IsNull(raw) {
		return
	}
	if s, ok := str(raw); ok {
		c.Text += s
		return
	}
	if l := list(raw); l != nil {
		for _, p := range l {
			c.part(p)
		}
		return
	}
	if o := object(raw); o != nil {
		c.part(raw)
		return
	}
	// A number or boolean: show it as written.
	c.Text += strings.TrimSpace(string(raw))
}

func str(raw json.RawMessage) (string, bool) {
	if len(raw) > 0 && raw[0] == '"' {
		return jsonx.Unquote(raw)
	}
	return "", false
}

// part reads one content part.
func (c *Content) part(raw json.RawMessage) {
	if s, ok := str(raw); ok {
		c.Text += s
		return
	}
	o := object(raw)
	if o == nil {
		return
	}
	typ := StrField(o, "type")
	switch typ {
	case "", "text", "input_text", "output_text":
		if t, ok := str(o["text"]); ok {
			c.Text += t
			return
		}
		if typ == "" {
			if _, ok := o["image_url"]; ok {
				c.Text += imagePlaceholder(o)
				return
			}
			c.Text += "[part]"
			return
		}
		// A text part whose text is not a string: say what it holds.
		c.Text += Excerpt(o["text"])
	case "thinking", "reasoning", "reasoning.text":
		c.Thinking += FirstStr(o, "thinking", "text", "reasoning")
		if sum := list(o["summary"]); sum != nil {
			for _, s := range sum {
				if so := object(s); so != nil {
					c.Thinking += FirstStr(so, "text", "summary")
				}
			}
		}
	case "reasoning.summary":
		c.Thinking += FirstStr(o, "summary", "text")
	case "redacted_thinking", "reasoning.encrypted":
		c.Thinking += "[redacted]"
	case "refusal":
		c.Text += FirstStr(o, "refusal", "text")
	case "image", "image_url", "input_image":
		c.Text += imagePlaceholder(o)
	case "tool_use", "server_tool_use":
		if typ == "server_tool_use" {
			c.Text += "[server tool " + StrField(o, "name") + "]"
			return
		}
		c.ToolCalls = append(c.ToolCalls, events.NewToolCall(StrField(o, "id"), StrField(o, "name"), o["input"]))
	case "tool_result":
		r := Result{CallID: FirstStr(o, "tool_use_id", "id")}
		inner := ParseContent(o["content"])
		r.Text = inner.Text
		r.IsError, r.Known = Bool(o["is_error"])
		c.Results = append(c.Results, r)
	case "document", "file", "input_file", "input_audio", "audio":
		c.Text += "[" + typ + mediaSuffix(o) + "]"
	default:
		c.Text += "[" + typ + "]"
	}
}

func mediaSuffix(o Object) string {
	if src := object(o["source"]); src != nil {
		if mt := StrField(src, "media_type"); mt != "" {
			return " " + mt
		}
	}
	return ""
}

// imagePlaceholder describes an image part without its data: media type
// and decoded size for inline data, the address for a link.
func imagePlaceholder(o Object) string {
	media, url, data := "", "", ""
	if src := object(o["source"]); src != nil { // Anthropic
		media = StrField(src, "media_type")
		url = StrField(src, "url")
		data = StrField(src, "data")
	}
	if iu := o["image_url"]; iu != nil { // OpenAI: a string or {"url"}
		if s, ok := str(iu); ok {
			url = s
		} else if io := object(iu); io != nil {
			url = StrField(io, "url")
		}
	}
	if url == "" {
		url = StrField(o, "url")
	}
	if strings.HasPrefix(url, "data:") {
		meta, payload, _ := strings.Cut(url[len("data:"):], ",")
		mt, _, _ := strings.Cut(meta, ";")
		if media == "" {
			media = mt
		}
		data, url = payload, ""
	}
	if media == "" {
		media = "image"
	}
	switch {
	case data != "":
		return fmt.Sprintf("[%s %s]", media, size(base64Len(data)))
	case url != "":
		return fmt.Sprintf("[%s %s]", media, url)
	}
	return "[" + media + "]"
}

func base64Len(s string) int {
	n := len(strings.TrimRight(s, "="))
	return n * 3 / 4
}

func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", (n+512)>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// Excerpt is a short, one-line rendering of a JSON value for notices.
func Excerpt(raw json.RawMessage) string {
	return events.Excerpt(raw, 120)
}
