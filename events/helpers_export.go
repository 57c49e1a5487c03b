package events

import (
	"encoding/json"
	"strings"
)

// NormalizeArgs turns tool-call arguments as any system sends them (a JSON
// string, an object, a double-encoded string, empty, absent or invalid)
// into a ToolCall's Args, ArgsRaw, ArgsErr and DoubleEncoded. It never
// fails: invalid arguments are kept raw with the reason.
func NormalizeArgs(raw json.RawMessage) (args json.RawMessage, text, errText string, double bool) {
	return normalizeArgs(raw)
}

// NewToolCall is a ToolCall with its arguments normalized (see
// NormalizeArgs).
func NewToolCall(id, name string, rawArgs json.RawMessage) ToolCall {
	c := ToolCall{ID: id, Name: name}
	c.Args, c.ArgsRaw, c.ArgsErr, c.DoubleEncoded = normalizeArgs(rawArgs)
	// Raw bytes of an argument object may hold invalid UTF-8 that a JSON
	// string never does; keep the text valid.
	c.ArgsRaw = strings.ToValidUTF8(c.ArgsRaw, "\uFFFD")
	return c
}

// Bound keeps at most MaxText bytes of text for display-only fields
// (notices, excerpts); conversation text and tool output are kept whole.
func Bound(s string) string { return bound(s) }
