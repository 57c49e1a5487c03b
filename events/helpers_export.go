package events

import "github.com/perch-tui/perch/tools"

// The parsers of tool output (results.go) under the names the backends'
// decoders call them by.

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

// FillDetails parses the text of a successful tool call into r's
// per-tool details (command, file, write, patch, todos; a listing and a
// search are marked to be read when drawn), unless r has details already.
func FillDetails(r *ToolResult, name string, call ToolCall) { fillDetails(r, name, call) }
