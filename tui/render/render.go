// Package render draws transcript items (user turns, assistant replies, tool
// calls, notices) and a few panels as plain lines of styled text. It holds no
// Bubble Tea model: the transcript list asks for an item's lines at a width
// and gets them, from cache when nothing changed.
//
// Every string from the daemon goes through package sanitize before it is
// measured, wrapped or styled; every returned line is at most Options.Width
// cells wide.
package render

import (
	"sync"

	"charm.land/glamour/v2"
	"github.com/alecthomas/chroma/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
)

// Options says how to draw one item.
type Options struct {
	// Width is the number of cells available; every line fits in it.
	Width int
	// Expanded shows a tool's whole output (still bounded) instead of a
	// head/tail preview.
	Expanded bool
	// Selected draws the selection bar in the gutter.
	Selected bool
	// Spinner is the current spinner frame for running tools (see
	// styles.SpinnerFrame). "" draws a static running icon.
	Spinner string
	// HideThinking leaves the model's reasoning out of assistant turns
	// (shown by default).
	HideThinking bool
}

// DefaultCacheLimit bounds the rendered-lines cache. At roughly 100 bytes a
// line, that is about 80,000 lines, two thousand screens: what a person
// pages back to is found drawn, while paging through a whole long session
// no longer keeps every item drawn (the 10k long session drawn whole at
// one width counts 13.5 MB here, 18 MB of heap, beside its 33 MB
// timeline). An item evicted is drawn again when it comes back on screen.
const DefaultCacheLimit = 8 << 20

// Renderer renders items and memoizes the results. It is safe for
// concurrent use (a background pre-warm may run beside View), but calls are
// serialized by one mutex: glamour renderers are not concurrency-safe, and
// rendering is CPU-bound anyway.
type Renderer struct {
	// findBuf is the search's window into outputs kept in the store
	// (Contains), reused from item to item.
	findBuf []byte
	mu      sync.Mutex
	st      *styles.Styles
	theme   styles.Theme
	p       paints

	cache *lru

	// One glamour renderer per wrap width, created lazily: creating one is
	// cheap (~20 µs) but not free, and there are only a few widths in a
	// session.
	md map[int]*glamour.TermRenderer

	// Chroma state, memoized because building lexers and styles on the
	// render path is a known cause of slow agent TUIs.
	chromaStyle *chroma.Style
	lexers      map[string]chroma.Lexer // by file extension or name; nil = none
	tokenPaint  map[chroma.TokenType]paint

	// Line tables of the big texts of expanded tools, shared by widths,
	// and the item versions Prepare has seen.
	tables   []tableEntry
	prepared map[*events.Item]uint64

	// Streamed replies' rendered stable prefixes (mdstream.go).
	streams []*mdStream

	stats Stats
}

// Stats counts cache behaviour, for tests and a debug overlay.
type Stats struct {
	Hits, Misses, Evictions int
	Bytes, Entries          int
	// Tables counts line tables built for big expanded outputs, and
	// RowsLaidOut the rows of expanded tool bodies styled: both show
	// that work follows the screen, not the output.
	Tables, RowsLaidOut int
	// MarkdownBytes counts the bytes sent through glamour: a streamed
	// reply costs about its length plus its open tails, not the sum of
	// its lengths.
	MarkdownBytes int
}

// New returns a Renderer drawing with st. theme selects the glamour and
// chroma styles and should be the theme st was built with.
func New(st *styles.Styles, theme styles.Theme) *Renderer {
	r := &Renderer{cache: newLRU(DefaultCacheLimit)}
	r.setStyles(st, theme)
	return r
}

// SetStyles switches theme: every cache (items, glamour, chroma) is dropped
// together, since any of them would otherwise keep old colours.
func (r *Renderer) SetStyles(st *styles.Styles, theme styles.Theme) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setStyles(st, theme)
}

func (r *Renderer) setStyles(st *styles.Styles, theme styles.Theme) {
	if st == nil {
		st = styles.New(theme)
	}
	r.st, r.theme = st, theme
	r.p = newPaints(st)
	r.invalidate()
}

// Invalidate drops every cached render and renderer. Call it when the
// styles change in place; a width change needs nothing (width is part of
// the cache key).
func (r *Renderer) Invalidate() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.invalidate()
}

func (r *Renderer) invalidate() {
	r.cache.clear()
	r.md = map[int]*glamour.TermRenderer{}
	r.chromaStyle = nil
	r.lexers = map[string]chroma.Lexer{}
	r.tokenPaint = map[chroma.TokenType]paint{}
	r.tables = nil
	r.prepared = map[*events.Item]uint64{}
	r.streams = nil
}

// SetCacheLimit changes the byte bound of the render cache (0 = default).
func (r *Renderer) SetCacheLimit(bytes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if bytes <= 0 {
		bytes = DefaultCacheLimit
	}
	r.cache.limit = bytes
	r.stats.Evictions += r.cache.evict()
}

// Stats returns cache counters.
func (r *Renderer) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Bytes, s.Entries = r.cache.bytes, len(r.cache.m)
	return s
}

// Forget drops the cached renders of one item (e.g. when it leaves the
// timeline), so the cache does not keep it alive until eviction.
func (r *Renderer) Forget(it *events.Item) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cache.forget(it)
	kept := r.tables[:0]
	for _, e := range r.tables {
		if e.key.it != it {
			kept = append(kept, e)
		}
	}
	clear(r.tables[len(kept):])
	r.tables = kept
	delete(r.prepared, it)
	r.forgetStreams(it)
}

// gutterWidth is the left column holding the selection or user bar.
const gutterWidth = 2

// MaxTextWidth is the widest prose is laid out — user and assistant
// messages with their markdown and tables, notices — however wide the
// terminal: longer lines are hard to read, so a wide terminal gets a
// readable column (as glow's pages) while the frame around it spans the
// window. Tool output keeps the whole width: wide logs and code gain
// from it.
const MaxTextWidth = 120

// layoutWidth is the width an item is laid out at (its gutter included)
// in a transcript w cells wide. The cache is keyed by it, so every window
// wider than the prose column shares one layout of each message.
func layoutWidth(it *events.Item, w int) int {
	if it.Kind == events.ItemTool {
		return w
	}
	return min(w, MaxTextWidth+gutterWidth)
}

// Item returns all the lines of it at o.Width. The slice is shared with
// the cache: callers must not modify it. A nil item or non-positive width
// gives nil. An expanded tool shows its whole output: use Height and Lines
// to lay out only what is seen.
func (r *Renderer) Item(it *events.Item, o Options) []string {
	if it == nil || o.Width <= 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entry(it, o)
	if e.c.body == nil {
		return r.head(e, o)
	}
	return r.lines(e, o, 0, len(e.c.lines)+e.c.body.total)
}

// Height is the number of lines of it at o.Width, without laying out an
// expanded tool's body.
func (r *Renderer) Height(it *events.Item, o Options) int {
	if it == nil || o.Width <= 0 {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entry(it, o)
	if e.c.body != nil {
		return len(e.c.lines) + e.c.body.total
	}
	return len(r.head(e, o))
}

// Lines returns lines [from, to) of it at o.Width (clamped to the item),
// laying out only those. The slice may be shared with the cache: callers
// must not modify it.
func (r *Renderer) Lines(it *events.Item, o Options, from, to int) []string {
	if it == nil || o.Width <= 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lines(r.entry(it, o), o, from, to)
}

func (r *Renderer) lines(e *entry, o Options, from, to int) []string {
	head := r.head(e, o)
	total := len(head)
	if e.c.body != nil {
		total += e.c.body.total
	}
	from, to = max(from, 0), min(to, total)
	if from >= to {
		return nil
	}
	if to <= len(head) {
		return head[from:to]
	}
	out := make([]string, 0, to-from)
	if from < len(head) {
		out = append(out, head[from:]...)
	}
	g := r.gutter(e.c.kind, o.Width, o.Selected) + r.p.rail
	rows, grew := e.c.body.rows(max(from-len(head), 0), to-len(head))
	for _, l := range rows {
		l = g + l
		if o.Width < 24+gutterWidth {
			// Fixed parts (rails, line numbers) can exceed a narrow width.
			l = fitStyled(l, o.Width)
		}
		out = append(out, l)
	}
	if grew {
		r.stats.Evictions += r.cache.resize(e)
	}
	return out
}

// entry finds or renders the cache entry of it at o.
func (r *Renderer) entry(it *events.Item, o Options) *entry {
	k := cacheKey{it: it, width: layoutWidth(it, o.Width), expanded: o.Expanded, hideThinking: o.HideThinking && it.Kind == events.ItemAssistant}
	e := r.cache.get(k)
	if e != nil && e.version == it.Version {
		r.stats.Hits++
		return e
	}
	r.stats.Misses++
	c := r.content(it, o)
	if e == nil {
		e = &entry{key: k}
	}
	e.version = it.Version
	e.c = c
	e.lines = [2][]string{}
	r.stats.Evictions += r.cache.put(e)
	return e
}

// head is e's laid-out lines with the gutter (all of them, or an expanded
// tool's header), the running spinner drawn in.
func (r *Renderer) head(e *entry, o Options) []string {
	sel := 0
	if o.Selected {
		sel = 1
	}
	if e.lines[sel] == nil {
		e.lines[sel] = r.withGutter(e.c, o.Width, o.Selected)
		r.stats.Evictions += r.cache.resize(e)
	}
	lines := e.lines[sel]
	if e.c.running && len(lines) > 0 {
		// The spinner is the only part that changes between versions:
		// redraw the header line only, over a copy of the cached slice.
		out := make([]string, len(lines))
		copy(out, lines)
		out[0] = fitStyled(r.gutter(e.c.kind, o.Width, o.Selected)+r.runningHeader(e.c, o.Spinner), o.Width)
		return out
	}
	return lines
}

// content is an item's lines without the gutter, plus what is needed to
// redraw a running tool's header.
type content struct {
	kind    events.ItemKind
	lines   []string
	running bool
	// headerTail is the header after the status icon, for running tools.
	headerTail string
	// body is an expanded tool's output, laid out on demand below lines
	// (the header); nil for everything else.
	body *wrapped
}

func (r *Renderer) content(it *events.Item, o Options) content {
	w := layoutWidth(it, o.Width)
	if w > gutterWidth+1 {
		w -= gutterWidth
	}
	c := content{kind: it.Kind}
	switch it.Kind {
	case events.ItemUser:
		c.lines = r.user(it, w, o.Expanded)
	case events.ItemAssistant:
		c.lines = r.assistant(it, w, o.Expanded, o.HideThinking)
	case events.ItemTool:
		c = r.tool(it, w, o.Expanded)
		c.kind = it.Kind
	default:
		c.lines = r.notice(it, w, o.Expanded)
	}
	// Renderers lay out for ordinary widths; fixed parts (rails, line
	// numbers, labels) can exceed a very narrow one, so there every line
	// is cut. The header is always checked: it mixes many parts.
	for i, l := range c.lines {
		if i == 0 || w < 24 {
			c.lines[i] = fitStyled(l, w)
		}
	}
	if c.running && ansi.StringWidth(c.headerTail)+2 > w {
		c.headerTail = fitStyled(c.headerTail, max(w-2, 0))
	}
	return c
}

// gutter is the two-cell left margin of every line: the selection bar, the
// user bubble's accent bar, or blanks.
func (r *Renderer) gutter(kind events.ItemKind, width int, selected bool) string {
	if width <= gutterWidth+1 {
		return ""
	}
	switch {
	case selected:
		return r.p.selBar
	case kind == events.ItemUser:
		return r.p.userBar
	}
	return "  "
}

func (r *Renderer) withGutter(c content, width int, selected bool) []string {
	g := r.gutter(c.kind, width, selected)
	out := make([]string, len(c.lines))
	for i, l := range c.lines {
		out[i] = g + l
	}
	return out
}
