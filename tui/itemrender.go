package tui

import (
	"github.com/perch-tui/perch/events"
)

// itemOpts is how one transcript item should be drawn.
type itemOpts struct {
	Width    int
	Expanded bool
	Selected bool
	Spinner  string
}

// itemRenderer draws transcript items. The real one is tui/render (cached
// per item version and width); the transcript only relies on this small
// surface, so tests and benchmarks can count calls.
type itemRenderer interface {
	// Item returns the item's lines, each at most o.Width cells wide. The
	// result is owned by the renderer's cache: callers must not modify it.
	Item(it *events.Item, o itemOpts) []string
	// PlainText is the item's text for copy and search.
	PlainText(it *events.Item) string
	// Highlight marks case-insensitive matches of query in a rendered line.
	Highlight(line, query string) string
}
