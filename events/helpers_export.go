package events

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/tools"
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

// WithDetails returns r with the per-tool details (command, listing, file,
// search, write, patch, todos) read from its text as format f when r has
// none yet, for views that get a result built elsewhere. r itself is not
// changed. A listing and a search are read from the text when asked for
// (FileListing, SearchResult).
func WithDetails(r *ToolResult, f tools.Format, call ToolCall) *ToolResult {
	if r == nil || r.hasDetails() {
		return r
	}
	cp := *r
	fillFormat(&cp, f, call)
	return &cp
}

// maxNoticeText bounds the text of a notice a decoder writes (a system
// prompt, a host message): notices are read, not exported byte for byte.
const maxNoticeText = 4 << 20

// Bound keeps at most maxNoticeText bytes of a notice's text: its head and
// tail, with a marker that says how much was cut. Conversation text and
// tool output are never bounded this way: they are kept whole.
func Bound(s string) string {
	if len(s) <= maxNoticeText {
		return s
	}
	head := strings.ToValidUTF8(s[:maxNoticeText*3/4], "")
	tail := strings.ToValidUTF8(s[len(s)-maxNoticeText/4:], "")
	return head + "\n… [" + strconv.Itoa(len(s)-len(head)-len(tail)) + " bytes not shown] …\n" + tail
}
