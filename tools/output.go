package tools

import "strings"

// The details a tool's output gives, whatever format it came in: what the
// parsers here return and the renderers draw. Large strings in them are
// slices of the output text when it holds them, not copies.

// CommandResult is a shell command's outcome.
type CommandResult struct {
	Command  string
	ExitCode *int // nil when unknown (timed out, or not reported)
	TimedOut bool
	Stdout   string
	Stderr   string
}

// FileListing is a directory listing.
type FileListing struct {
	Path    string
	Entries []FileEntry
}

// FileEntry is one entry of a listing.
type FileEntry struct {
	Name   string
	Kind   string // file | directory | symlink | other
	Hidden bool
}

// FileContent is a file read.
type FileContent struct {
	Path      string
	StartLine int
	EndLine   int
	// Content is the lines. When Numbered they are the rows of maria's
	// HEAD text, each still prefixed " L12 | " (a slice of the result text,
	// not a copy; see StripRow and Plain); otherwise they are plain.
	Content  string
	Numbered bool
}

// Plain is the content without row prefixes (built anew when Numbered).
func (f *FileContent) Plain() string {
	if !f.Numbered {
		return f.Content
	}
	var b strings.Builder
	b.Grow(len(f.Content))
	for rest, more := f.Content, true; more; {
		var l string
		l, rest, more = strings.Cut(rest, "\n")
		b.WriteString(StripRow(l))
		if more {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// SearchResult is a search's outcome.
type SearchResult struct {
	Message string
	Total   int
	Hits    []SearchHit
}

// SearchHit is one match of a search.
type SearchHit struct {
	Path    string
	Line    int
	Context string
}

// WriteResult is a file write's outcome.
type WriteResult struct {
	Path string
}

// PatchResult is an apply_patch outcome (or a legacy meta_write_to_file
// diff).
type PatchResult struct {
	Message  string
	Added    []string
	Modified []string
	Deleted  []string
	Diff     string
}

// Todo is one item of the agent's todo list.
type Todo struct {
	ID       string
	Content  string
	Status   string // pending | in_progress | completed
	Priority string // high | medium | low
	Notes    string
}
