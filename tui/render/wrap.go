package render

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/styles"
)

// An expanded tool body shows every line of its output, long lines wrapped
// to the width, however large the output is. Nothing proportional to the
// output is styled or wrapped: a lineTable (built once per text, shared by
// every width) knows where each line starts and how many cells it takes;
// at a width, its rows are counted from those numbers alone; and only the
// rows on screen are cut, cleaned and styled (see wrapped.rows).

// lineTable is what a seg's text looks like without laying it out: the
// byte offset of each line and its width in cells once cleaned.
type lineTable struct {
	off   []uint32 // start of line i in raw; line i ends before off[i+1]-1 (or at len(raw))
	cells []uint32 // display cells of line i after pre and cleaning
}

// maxTableText bounds the texts a lineTable indexes (offsets are uint32);
// events are far smaller (sse.MaxEventBytes).
const maxTableText = 1<<32 - 1

// newLineTable indexes raw, which has n lines. The common line (printable
// ASCII, maybe tabs) is measured by arithmetic; only lines with other
// bytes are cleaned to be measured.
func newLineTable(raw string, n int, pre func(string) string) *lineTable {
	t := &lineTable{off: make([]uint32, 0, n), cells: make([]uint32, 0, n)}
	t.index(raw, n, 0, pre)
	return t
}

// index adds raw's lines from offset pos on, up to n lines in all.
func (t *lineTable) index(raw string, n, pos int, pre func(string) string) {
	for len(t.off) < n {
		end := strings.IndexByte(raw[pos:], '\n')
		if end < 0 {
			end = len(raw)
		} else {
			end += pos
		}
		l := raw[pos:end]
		if pre != nil {
			l = pre(l)
		}
		t.off = append(t.off, uint32(pos))
		t.cells = append(t.cells, uint32(lineCells(l)))
		pos = min(end+1, len(raw))
	}
}

// line returns raw line i of s.
func (t *lineTable) line(s string, i int) string {
	a := int(t.off[i])
	if i+1 < len(t.off) {
		return s[a : int(t.off[i+1])-1]
	}
	if j := strings.IndexByte(s[a:], '\n'); j >= 0 {
		return s[a : a+j]
	}
	return s[a:]
}

// size is the memory the table holds.
func (t *lineTable) size() int { return 8 * cap(t.off) }

// lineCells is the width of raw once cleaned: its byte length for
// printable ASCII, tab stops counted for ASCII with tabs, else measured on
// the cleaned text (cut to maxRawLine, as cleanLine does).
func lineCells(raw string) int {
	// Code is indented with tabs: those are four cells each, and the rest
	// is usually printable ASCII, checked eight bytes at a time.
	lead := 0
	for lead < len(raw) && raw[lead] == '\t' {
		lead++
	}
	if lead > 0 && asciiKind(raw[lead:]) == kindPrintable {
		return lead*sanitize.TabWidth + len(raw) - lead
	}
	switch asciiKind(raw) {
	case kindPrintable:
		return len(raw)
	case kindTabs:
		col := 0
		for rest := raw; ; {
			i := strings.IndexByte(rest, '\t')
			if i < 0 {
				return col + len(rest)
			}
			col += i
			col += sanitize.TabWidth - col%sanitize.TabWidth
			rest = rest[i+1:]
		}
	}
	if len(raw) > maxRawLine {
		return estimateCells(cleanText(raw))
	}
	return estimateCells(raw)
}

// cleanText is a line of any kind but printable ASCII made safe: cut to
// maxRawLine bytes (with an ellipsis saying so) and sanitized.
func cleanText(raw string) string {
	if len(raw) > maxRawLine {
		return cleanLine(raw) + styles.Ellipsis
	}
	return cleanLine(raw)
}

// estimateCells is the width of a line without escape sequences, one rune
// at a time: grapheme clustering (ansi.StringWidth) costs about ten times
// more, which a 30 MB output of non-ASCII text would pay on every line.
// Where the two disagree (emoji sequences), splitRows keeps the row count
// and the rows still fit.
func estimateCells(s string) int {
	col := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b {
			i = skipEscape(s, i)
			continue
		}
		if c < utf8.RuneSelf {
			switch {
			case c == '\t':
				col += sanitize.TabWidth - col%sanitize.TabWidth
			case c >= 0x20 && c < 0x7f:
				col++
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r < 0xa0:
			// C1 controls: removed by sanitize
		case r < 0x300:
			col++
		case r <= 0x36f, r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e,
			r >= 0x2066 && r <= 0x2069, r >= 0xfe00 && r <= 0xfe0f:
			// combining marks, zero-width and bidi controls
		default:
			col += runeCells(r)
		}
	}
	return col
}

// skipEscape returns the end of the escape sequence at s[i] (an ESC), the
// way sanitize removes it: CSI up to its final byte, OSC and other strings
// up to BEL or ST, else ESC and the next byte.
func skipEscape(s string, i int) int {
	i++
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		for i++; i < len(s); i++ {
			if c := s[i]; c >= 0x40 && c <= 0x7e {
				return i + 1
			}
		}
		return i
	case ']', 'P', 'X', '^', '_':
		for i++; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return i
	}
	return i + 1
}

// runeCells is 2 for East Asian wide and emoji runes, else 1.
func runeCells(r rune) int {
	switch {
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf && r != 0x303f,
		r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1f64f, r >= 0x1f900 && r <= 0x1f9ff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

const (
	kindPrintable = iota // bytes 0x20–0x7e only: the text is its own clean form, a byte a cell
	kindTabs             // printable ASCII and tabs
	kindOther            // anything else: clean and measure
)

// asciiKind classifies s.
func asciiKind(s string) int {
	kind := kindPrintable
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c-0x20 < 0x7f-0x20 { // 0x20–0x7e
			continue
		}
		if c != '\t' {
			return kindOther
		}
		kind = kindTabs
	}
	return kind
}

// rowsOf is how many rows a line of c cells takes at width w.
func rowsOf(c uint32, w int) int {
	if c == 0 {
		return 1
	}
	return int((c + uint32(w) - 1) / uint32(w))
}

// splitRows cuts a clean line of n rows at w cells into rows [from, to).
func splitRows(clean string, printable bool, n, w, from, to int) []string {
	out := make([]string, 0, to-from)
	if printable {
		for k := from; k < to; k++ {
			a, b := min(k*w, len(clean)), min((k+1)*w, len(clean))
			out = append(out, clean[a:b])
		}
		return out
	}
	parts := strings.Split(ansi.Hardwrap(clean, w, true), "\n")
	for k := from; k < to; k++ {
		switch {
		case k < len(parts) && k == n-1 && len(parts) > n:
			// Wide characters pushed the text onto more rows than its
			// width says: the last row shows that there is more.
			out = append(out, fit(strings.Join(parts[k:], ""), w))
		case k < len(parts):
			out = append(out, fit(parts[k], w))
		default:
			out = append(out, "")
		}
	}
	return out
}

// tableCacheLen is how many line tables of big texts a renderer keeps:
// a few expanded outputs, each re-laid out at every width it is seen at.
const tableCacheLen = 4

// bigTable is the size from which a text's line table is kept across
// widths and versions; smaller ones are cheaper to rebuild than to keep.
const bigTable = 256 << 10

// tableKey names a text by where it is shown: seg i of an item's body.
// One entry per place, so a streaming output's versions replace each
// other instead of piling up.
type tableKey struct {
	it  *events.Item
	seg int
}

type tableEntry struct {
	key tableKey
	raw string // the text indexed (the timeline holds it anyway)
	pre bool
	t   *lineTable
}

// table returns the line table of seg i of it's body, from the
// renderer's cache when the text is big. A text that grew (a running
// tool's output) extends its previous table instead of indexing again.
func (r *Renderer) table(it *events.Item, i int, s seg) *lineTable {
	if len(s.raw) < bigTable {
		return newLineTable(s.raw, s.n, s.pre)
	}
	e := r.tableEntry(tableKey{it, i})
	if e != nil && e.pre == (s.pre != nil) && e.raw == s.raw {
		return e.t
	}
	var t *lineTable
	if e != nil && e.pre == (s.pre != nil) && len(s.raw) > len(e.raw) && strings.HasPrefix(s.raw, e.raw) {
		t = e.t.extend(s.raw, s.n, s.pre)
	} else {
		t = newLineTable(s.raw, s.n, s.pre)
	}
	r.addTable(tableKey{it, i}, s, t)
	return t
}

func (r *Renderer) tableEntry(k tableKey) *tableEntry {
	for i := range r.tables {
		if r.tables[i].key == k {
			return &r.tables[i]
		}
	}
	return nil
}

// addTable keeps t as the table of k (replacing what k had).
func (r *Renderer) addTable(k tableKey, s seg, t *lineTable) {
	r.stats.Tables++
	e := tableEntry{key: k, raw: s.raw, pre: s.pre != nil, t: t}
	if old := r.tableEntry(k); old != nil {
		*old = e
		return
	}
	if len(r.tables) == tableCacheLen {
		copy(r.tables, r.tables[1:])
		r.tables = r.tables[:tableCacheLen-1]
	}
	r.tables = append(r.tables, e)
}

// extend indexes raw, which starts with the text t indexed, from t's last
// line on (that line may have grown). t itself is left as it was: bodies
// of the earlier version may still read it.
func (t *lineTable) extend(raw string, n int, pre func(string) string) *lineTable {
	keep := len(t.off) - 1
	nt := &lineTable{off: make([]uint32, keep, n), cells: make([]uint32, keep, n)}
	copy(nt.off, t.off[:keep])
	copy(nt.cells, t.cells[:keep])
	nt.index(raw, n, int(t.off[keep]), pre)
	return nt
}

// Prepare returns the slow part of expanding tool it, to be run on any
// goroutine: building the line tables of its big texts (tens of
// milliseconds for 30 MB). It is nil when there is nothing to build. Call
// Prepare where it is owned (the item is read now); the work it returns
// reads only immutable strings. The transcript runs it when a big tool is
// selected, so that Enter finds the tables built.
func (r *Renderer) Prepare(it *events.Item, width int) func() {
	if it == nil || it.Kind != events.ItemTool || it.Tool == nil || it.Tool.Result == nil || width <= 0 {
		return nil
	}
	r.mu.Lock()
	// Finding the segs parses and counts the output (milliseconds for
	// 30 MB): once per version, not on every key while it is selected.
	if v, ok := r.prepared[it]; ok && v == it.Version {
		r.mu.Unlock()
		return nil
	}
	if len(r.prepared) >= 64 {
		clear(r.prepared)
	}
	r.prepared[it] = it.Version
	segs, _, _ := r.toolSegs(it.Tool, max(width-gutterWidth, 1))
	type job struct {
		i int
		s seg
	}
	var todo []job
	for i, s := range segs {
		if s.gen != nil || len(s.raw) < bigTable {
			continue
		}
		if e := r.tableEntry(tableKey{it, i}); e == nil || e.raw != s.raw {
			todo = append(todo, job{i, s})
		}
	}
	r.mu.Unlock()
	if len(todo) == 0 {
		return nil
	}
	return func() {
		for _, j := range todo {
			t := newLineTable(j.s.raw, j.s.n, j.s.pre)
			r.mu.Lock()
			if e := r.tableEntry(tableKey{it, j.i}); e == nil || e.raw != j.s.raw {
				r.addTable(tableKey{it, j.i}, j.s, t)
			}
			r.mu.Unlock()
		}
	}
}

// wrapped is an expanded tool body at one width, laid out on demand.
type wrapped struct {
	r     *Renderer
	segs  []seg
	w     int
	tabs  []*lineTable // per seg; nil for generated segs
	cw    []int        // per seg: the width its text wraps at
	cum   [][]int      // per seg: rows before line k*cumStep
	start []int        // first row of each seg
	total int

	// blocks of laid-out rows (styled, without rail or gutter), bounded.
	blocks map[int][]string
	order  []int
}

const (
	cumStep   = 128 // lines between row checkpoints
	blockRows = 64  // rows laid out together
	maxBlocks = 32  // blocks kept per body (about 2,000 rows)
)

func (r *Renderer) newWrapped(it *events.Item, segs []seg, w int) *wrapped {
	b := &wrapped{r: r, segs: segs, w: w, blocks: map[int][]string{}}
	for i, s := range segs {
		b.start = append(b.start, b.total)
		if s.gen != nil {
			b.tabs, b.cw, b.cum = append(b.tabs, nil), append(b.cw, w), append(b.cum, nil)
			b.total += s.n
			continue
		}
		t := r.table(it, i, s)
		cw := max(w-s.deco, 1)
		cum := make([]int, 0, s.n/cumStep+1)
		rows := 0
		for i, c := range t.cells {
			if i%cumStep == 0 {
				cum = append(cum, rows)
			}
			if c <= uint32(cw) { // most lines: no division
				rows++
			} else {
				rows += rowsOf(c, cw)
			}
		}
		b.tabs, b.cw, b.cum = append(b.tabs, t), append(b.cw, cw), append(b.cum, cum)
		b.total += rows
	}
	return b
}

// size approximates the memory the body holds beyond the shared tables.
func (b *wrapped) size() int {
	n := 256
	for _, c := range b.cum {
		n += 8 * len(c)
	}
	for i, t := range b.tabs {
		if t != nil && len(b.segs[i].raw) < bigTable { // big ones are the renderer's
			n += t.size()
		}
	}
	for _, blk := range b.blocks {
		for _, l := range blk {
			n += len(l) + 16
		}
	}
	return n
}

// rows returns rows [from, to) of the body; grew reports that rows were
// laid out (the cache entry grew).
func (b *wrapped) rows(from, to int) (out []string, grew bool) {
	from, to = max(from, 0), min(to, b.total)
	out = make([]string, 0, max(to-from, 0))
	for k := from / blockRows; k*blockRows < to; k++ {
		_, had := b.blocks[k]
		grew = grew || !had
		blk := b.block(k)
		lo, hi := max(from-k*blockRows, 0), min(to-k*blockRows, len(blk))
		out = append(out, blk[lo:hi]...)
	}
	return out, grew
}

func (b *wrapped) block(k int) []string {
	if blk, ok := b.blocks[k]; ok {
		return blk
	}
	blk := b.layout(k*blockRows, min((k+1)*blockRows, b.total))
	if len(b.order) == maxBlocks {
		delete(b.blocks, b.order[0])
		b.order = b.order[1:]
	}
	b.blocks[k] = blk
	b.order = append(b.order, k)
	b.r.stats.RowsLaidOut += len(blk)
	return blk
}

// layout styles rows [from, to) across segs.
func (b *wrapped) layout(from, to int) []string {
	out := make([]string, 0, to-from)
	for si, s := range b.segs {
		end := b.total
		if si+1 < len(b.segs) {
			end = b.start[si+1]
		}
		lo, hi := max(from, b.start[si]), min(to, end)
		if lo >= hi {
			continue
		}
		lo, hi = lo-b.start[si], hi-b.start[si]
		if s.gen != nil {
			for i := lo; i < hi; i++ {
				out = append(out, fitStyled(s.gen(i), b.w))
			}
			continue
		}
		out = append(out, b.segRows(si, lo, hi)...)
	}
	if b.w < 24 {
		for i, l := range out {
			out[i] = fitStyled(l, b.w)
		}
	}
	return out
}

// segRows lays out rows [from, to) of seg si.
func (b *wrapped) segRows(si, from, to int) []string {
	s, t, cw, cum := b.segs[si], b.tabs[si], b.cw[si], b.cum[si]
	// The checkpoint at or before from, then line by line.
	k := sort.Search(len(cum), func(k int) bool { return cum[k] > from }) - 1
	line, row := k*cumStep, cum[k]
	for {
		n := rowsOf(t.cells[line], cw)
		if row+n > from {
			break
		}
		row += n
		line++
	}
	var idx []int
	var clean []string
	for sub := from - row; len(clean) < to-from && line < len(t.cells); line, sub = line+1, 0 {
		n := rowsOf(t.cells[line], cw)
		raw := t.line(s.raw, line)
		if s.pre != nil {
			raw = s.pre(raw)
		}
		text := raw
		kind := asciiKind(raw)
		switch kind {
		case kindTabs:
			text = sanitize.Text(raw) // tabs become spaces: still a byte a cell
		case kindOther:
			text = cleanText(raw)
		}
		parts := splitRows(text, kind != kindOther, n, cw, sub, min(n, sub+to-from-len(clean)))
		for j := range parts {
			if sub+j == 0 {
				idx = append(idx, line)
			} else {
				idx = append(idx, -1)
			}
		}
		clean = append(clean, parts...)
	}
	if s.chunk != nil {
		return s.chunk(idx, clean, b.w)
	}
	for i, l := range clean {
		clean[i] = b.r.p.output.on(l)
	}
	return clean
}
