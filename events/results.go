package events

import "github.com/perch-tui/perch/tools"

// The details of a tool's output are tools' types: its parsers make them
// and the renderers draw them.
type (
	CommandResult = tools.CommandResult
	FileListing   = tools.FileListing
	FileEntry     = tools.FileEntry
	FileContent   = tools.FileContent
	SearchResult  = tools.SearchResult
	SearchHit     = tools.SearchHit
	WriteResult   = tools.WriteResult
	PatchResult   = tools.PatchResult
	Todo          = tools.Todo
)

// detailsKind names the details a ToolResult reads from its Text on demand.
type detailsKind uint8

const (
	detailsNone detailsKind = iota
	detailsListing
	detailsSearch
)

// hasDetails: r has per-tool details, kept or to be read from its text.
func (r *ToolResult) hasDetails() bool {
	return r.Command != nil || r.Listing != nil || r.File != nil || r.Search != nil || r.Write != nil ||
		r.Patch != nil || r.Todos != nil || r.fromText != detailsNone
}

// FileListing is list_files' listing: Listing when the result came with
// it, else read from the HEAD text (a new value at each call: callers that
// draw it keep what they drew, not the listing). nil when there is none.
func (r *ToolResult) FileListing() *FileListing {
	if r == nil {
		return nil
	}
	if r.Listing != nil || r.fromText != detailsListing {
		return r.Listing
	}
	return tools.ParseListing(r.Text)
}

// SearchResult is search_files' hits: Search when the result came with
// them, else read from the HEAD text (a new value at each call, like
// FileListing). nil when there are none.
func (r *ToolResult) SearchResult() *SearchResult {
	if r == nil {
		return nil
	}
	if r.Search != nil || r.fromText != detailsSearch {
		return r.Search
	}
	return tools.ParseSearch(r.Text)
}

// fillDetails parses the HEAD text of a successful tool call into the
// per-tool details, unless a legacy structure already gave them.
func fillDetails(r *ToolResult, name string, call ToolCall) {
	fillFormat(r, tools.FormatOf(name), call)
}

// fillFormat is fillDetails for a text of format f, with tools' parsers.
func fillFormat(r *ToolResult, f tools.Format, call ToolCall) {
	if r.hasDetails() {
		return
	}
	text := r.Text
	r.textDetails, r.format, r.detailsArgs = true, f, call.Args
	switch f {
	case tools.FormatCommand:
		r.Command = tools.ParseCommand(text, call.Args)
	case tools.FormatRead:
		r.File = tools.ParseRead(text)
	case tools.FormatListing:
		// Read when drawn (FileListing): only a text that is a listing.
		if tools.IsListing(text) {
			r.fromText = detailsListing
		}
	case tools.FormatSearch:
		r.fromText = detailsSearch // read when drawn (SearchResult)
	case tools.FormatWrite:
		r.Write = tools.ParseWrite(text)
	case tools.FormatPatch:
		r.Patch = tools.ParsePatch(text, call.Args)
	case tools.FormatTodo:
		r.Todos = tools.ParseTodos(text, call.Args)
	}
}

// keyArg picks the argument a person wants to see first.
func keyArg(name string, c ToolCall) string { return tools.KeyArg(name, c.Args, c.ArgsRaw) }
