package tui

import (
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/tui/chrome"
	"github.com/perch-tui/perch/tui/render"
)

// newItemRenderer is the transcript's renderer for a theme: tui/render,
// which caches every item per (version, width, expanded) with an LRU byte
// bound.
func newItemRenderer(t themeKind, ch chrome.Chrome) itemRenderer {
	return richRenderer{r: render.New(ch.St, t), match: render.NewHighlighter(ch.Match)}
}

type richRenderer struct {
	r     *render.Renderer
	match render.Highlighter
}

func (a richRenderer) Item(it *events.Item, o itemOpts) []string { return a.r.Item(it, renderOpts(o)) }

func (a richRenderer) Height(it *events.Item, o itemOpts) int { return a.r.Height(it, renderOpts(o)) }

func (a richRenderer) Lines(it *events.Item, o itemOpts, from, to int) []string {
	return a.r.Lines(it, renderOpts(o), from, to)
}

func renderOpts(o itemOpts) render.Options {
	return render.Options{Width: o.Width, Expanded: o.Expanded, Selected: o.Selected, Spinner: o.Spinner, HideThinking: o.HideThinking}
}

func (a richRenderer) Prepare(it *events.Item, o itemOpts) func() { return a.r.Prepare(it, o.Width) }

func (a richRenderer) Contains(it *events.Item, q string) bool { return a.r.Contains(it, q) }

func (a richRenderer) Count(it *events.Item, q string, limit int) int { return a.r.Count(it, q, limit) }

func (a richRenderer) Find(it *events.Item, o itemOpts, q string, from, dir int) (int, bool) {
	return a.r.Find(it, renderOpts(o), q, from, dir)
}

// Highlight restyles only lines that match: a matching line loses its own
// colours, which must not happen to every visible line.
func (a richRenderer) Highlight(line, query string) string { return a.match.Line(line, query) }

// catchUpCacheLimit bounds the render cache while the UI catches up with
// its stream: a few screens, where the usual bound keeps thousands. A
// day-long replay draws a new tail each frame; kept at the usual bound,
// those drawings grew with the replay's length (3 MB of the TUI's peak
// at 100,000 events) though nobody will page back to them drawn.
const catchUpCacheLimit = 512 << 10

func (a richRenderer) CatchingUp(on bool) {
	if on {
		a.r.SetCacheLimit(catchUpCacheLimit)
	} else {
		a.r.SetCacheLimit(0) // the default
	}
}
