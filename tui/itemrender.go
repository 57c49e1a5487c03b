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
	// HideThinking leaves reasoning out of assistant turns.
	HideThinking bool
}

// itemRenderer draws transcript items. The real one is tui/render (cached
// per item version and width); the transcript only relies on this small
// surface, so tests and benchmarks can count calls.
type itemRenderer interface {
	// Item returns all the item's lines, each at most o.Width cells wide.
	// The result is owned by the renderer's cache: callers must not modify
	// it. An expanded tool output can be huge: the transcript uses Height
	// and Lines.
	Item(it *events.Item, o itemOpts) []string
	// Height is the item's number of lines, without laying them out.
	Height(it *events.Item, o itemOpts) int
	// Lines returns lines [from, to) of the item, laying out only those.
	Lines(it *events.Item, o itemOpts, from, to int) []string
	// Contains reports whether the item holds query (smart case), its
	// whole tool output included.
	Contains(it *events.Item, query string) bool
	// Count is how many times the item holds query, up to limit (0: no
	// limit).
	Count(it *events.Item, query string, limit int) int
	// Prepare returns slow work expanding the item at o.Width will need,
	// to run off the UI goroutine, or nil.
	Prepare(it *events.Item, o itemOpts) func()
	// Find is the line of the next (dir > 0, after line from) or previous
	// (dir < 0, before it) match in an expanded tool's output.
	Find(it *events.Item, o itemOpts, query string, from, dir int) (int, bool)
	// Highlight marks case-insensitive matches of query in a rendered line.
	Highlight(line, query string) string
	// CatchingUp says whether the UI is behind its stream (see
	// Model.setCatchingUp): what is drawn then is off the screen by the
	// next frame, and is not worth keeping drawn.
	CatchingUp(on bool)
}

// height and rows give the transcript item i's size and some of its lines
// (see listSource); only the rows it shows are ever laid out.
func (s *itemSource) height(i int) int { return s.m.rend.Height(s.item(i), s.opts(i)) }

func (s *itemSource) rows(i, from, to int) []string {
	return s.m.rend.Lines(s.item(i), s.opts(i), from, to)
}
