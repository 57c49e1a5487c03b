package render

import (
	"bytes"
	"encoding/binary"
	"sort"
	"strings"

	"github.com/perch-tui/perch/events"
)

// Transcript search reads the texts the timeline keeps, whole: a match in
// the middle of a 30 MB output is found, and in an expanded tool the
// search lands on the row that holds it. Nothing is copied or lowered
// whole: texts are scanned in bounded chunks from where the search stands,
// so finding the next match costs the distance to it.

// findChunk is how much text is lowered at a time for a case-insensitive
// search.
const findChunk = 256 << 10

// Contains reports whether it holds query, with PlainText's smart case
// (a query without capitals ignores case): its header and text as
// PlainText gives them, and a tool's output whole.
func Contains(it *events.Item, query string) bool {
	found, _ := containsWith(it, query, nil)
	return found
}

// Contains is the package's Contains through the renderer's buffer: a
// search over a whole session reads every output kept in the store into
// one buffer instead of a copy of each.
func (r *Renderer) Contains(it *events.Item, query string) bool {
	found, buf := containsWith(it, query, r.findBuf)
	r.findBuf = buf
	return found
}

// FindBuffer is Contains with a buffer of its own, for a search that runs
// apart from the Renderer (in a command): it reads every stored output of
// a session through one buffer.
type FindBuffer struct{ buf []byte }

// Contains is the package's Contains through f's buffer.
func (f *FindBuffer) Contains(it *events.Item, query string) bool {
	found, buf := containsWith(it, query, f.buf)
	f.buf = buf
	return found
}

// Count is the renderer's Count through f's buffer.
func (f *FindBuffer) Count(it *events.Item, query string, limit int) int {
	n, buf := countWith(it, query, f.buf, limit)
	f.buf = buf
	return n
}

// containsWith is Contains reading an output kept in the store through
// buf, which it returns (grown) for the next call: a search over a whole
// session reads every output without a copy of each.
func containsWith(it *events.Item, query string, buf []byte) (bool, []byte) {
	if it == nil || query == "" {
		return false, buf
	}
	if it.Kind != events.ItemTool || it.Tool == nil {
		return smartIndex(PlainText(it), query, 0) >= 0, buf
	}
	if smartIndex(toolHeaderText(it.Tool), query, 0) >= 0 {
		return true, buf
	}
	if t := it.Tool; t.OutputStored() {
		// Read back a window at a time: a whole-session search reads
		// every output of a day-long session, and holding each whole
		// (and parsing its details) is what it need not do.
		if t.Result.ErrorText != "" && smartIndex(t.Result.ErrorText, query, 0) >= 0 {
			return true, buf
		}
		return storedContains(t, query, buf)
	}
	for _, s := range outputTexts(it.Tool.Output()) {
		if smartIndex(s, query, 0) >= 0 {
			return true, buf
		}
	}
	return false, buf
}

// storeWindow is how much of a stored output a search reads at a time.
const storeWindow = 256 << 10

// storedContains searches a tool's output kept in the timeline's store,
// a window at a time into buf (grown as needed, and returned for the next
// search); windows overlap by more than a match can span. A text the
// store lost matches nothing.
func storedContains(t *events.ToolItem, query string, buf []byte) (bool, []byte) {
	overlap := 4 * len(query)
	for at, n := 0, t.OutputLen(); at < n; at += storeWindow {
		want := min(storeWindow+overlap, n-at)
		if cap(buf) < want {
			buf = make([]byte, storeWindow+overlap)
		}
		got, err := t.ReadOutput(buf[:want], at)
		if err != nil {
			return false, buf
		}
		if smartIndex(buf[:got], query, 0) >= 0 {
			return true, buf
		}
	}
	return false, buf
}

// toolHeaderText is the first line PlainText gives a tool.
func toolHeaderText(t *events.ToolItem) string {
	s := toolName(t)
	if k := keyArg(t); k != "" {
		s += " " + k
	}
	return s
}

// outputTexts are the texts a tool's output is drawn from, as kept.
func outputTexts(res *events.ToolResult) []string {
	if res == nil {
		return nil
	}
	var out []string
	for _, s := range []string{res.Text, res.ErrorText} {
		if s != "" {
			out = append(out, s)
		}
	}
	if c := res.Command; c != nil && res.Text == "" {
		out = append(out, c.Stdout, c.Stderr)
	}
	if f := res.File; f != nil && res.Text == "" {
		out = append(out, f.Content)
	}
	return out
}

// text is what the search reads: a text kept in memory, or a window of
// one read back from the store into a buffer the search reuses (reading
// it as a string would make a copy of every output of the session).
type searchable interface{ ~string | ~[]byte }

// indexByte is strings.IndexByte or bytes.IndexByte, as s is.
func indexByte[T searchable](s T, c byte) int {
	if b, ok := any(s).([]byte); ok {
		return bytes.IndexByte(b, c)
	}
	return strings.IndexByte(string(s), c)
}

// index is strings.Index or bytes.Index, as s is.
func index[T searchable](s T, q string) int {
	if b, ok := any(s).([]byte); ok {
		return bytes.Index(b, []byte(q))
	}
	return strings.Index(string(s), q)
}

// smartIndex is the byte offset of the first match of query in s at or
// after from, or -1: case-insensitive when query has no capitals.
func smartIndex[T searchable](s T, query string, from int) int {
	if from < 0 || from > len(s) {
		return -1
	}
	if strings.ToLower(query) != query {
		if i := index(s[from:], query); i >= 0 {
			return from + i
		}
		return -1
	}
	if isASCII(query) {
		if i := foldIndex(s[from:], query); i >= 0 {
			return from + i
		}
		return -1
	}
	// A query with non-ASCII letters: lowered a chunk at a time, each
	// reaching past its end by the query so a match across the cut is
	// found. Lowering can change lengths: the offset is about there.
	for at := from; at < len(s); at += findChunk {
		ext := min(at+findChunk+len(query)-1, len(s))
		if i := strings.Index(strings.ToLower(string(s[at:ext])), query); i >= 0 {
			return at + min(i, ext-at-1)
		}
	}
	return -1
}

// foldIndex is the first offset of ASCII, lower-case q in s, ignoring the
// case of A–Z. It looks for q's rarest letter in both cases with
// IndexByte (vectorized), so a search runs near memory speed without
// copying or lowering the text, and checks q around each hit.
func foldIndex[T searchable](s T, q string) int {
	k := rarest(q)
	lc, uc := q[k], q[k]
	if lc >= 'a' && lc <= 'z' {
		uc = lc - ('a' - 'A')
	}
	next := func(c byte, p int) int {
		if i := indexByte(s[p:], c); i >= 0 {
			return p + i
		}
		return len(s)
	}
	nl, nu := -1, -1
	for p := k; p+len(q)-k <= len(s); {
		if nl < p {
			nl = next(lc, p)
		}
		if nu < p {
			nu = nl
			if uc != lc {
				nu = next(uc, p)
			}
		}
		c := min(nl, nu)
		if c+len(q)-k > len(s) {
			return -1
		}
		if start := c - k; equalFoldASCII(s[start:start+len(q)], q) {
			return start
		}
		p = c + 1
	}
	return -1
}

// rarest is the index of q's byte least frequent in English text and code,
// the one whose hits are fewest to check.
func rarest(q string) int {
	const byFreq = " etaoinsrhldcumfpgwybvkxjqz" // most frequent first
	best, bestRank := 0, -1
	for i := 0; i < len(q); i++ {
		r := strings.IndexByte(byFreq, q[i])
		if r < 0 {
			r = len(byFreq) // digits, punctuation: rarer than letters
		}
		if r > bestRank {
			best, bestRank = i, r
		}
	}
	return best
}

// equalFoldASCII reports whether s, with A–Z lowered, is q.
func equalFoldASCII[T searchable](s T, q string) bool {
	for i := 0; i < len(q); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != q[i] {
			return false
		}
	}
	return true
}

// smartLastIndex is the offset of the last match starting before to, or -1.
func smartLastIndex(s, query string, to int) int {
	to = min(to, len(s))
	if to <= 0 {
		return -1
	}
	fold := strings.ToLower(query) == query
	q := []byte(query)
	var buf []byte
	for end := to; end > 0; {
		at := max(end-findChunk, 0)
		ext := min(end+len(q)-1, len(s))
		var i int
		switch {
		case !fold:
			i = strings.LastIndex(s[at:ext], query)
		case isASCII(query):
			buf = lowerASCII(buf[:0], s[at:ext])
			i = bytes.LastIndex(buf, q)
		default:
			i = strings.LastIndex(strings.ToLower(s[at:ext]), query)
			i = min(i, ext-at-1)
		}
		if i >= 0 && at+i < to {
			return at + i
		}
		end = at
	}
	return -1
}

// lowerASCII appends s to dst with A–Z lowered, eight bytes at a time
// (other bytes, UTF-8 included, are kept: offsets stay the same).
func lowerASCII(dst []byte, s string) []byte {
	n := len(dst)
	dst = append(dst, s...)
	b := dst[n:]
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		h := x &^ hi // each byte's low seven bits: sums below never carry
		upper := (h + lo*(0x80-'A')) &^ (h + lo*(0x80-'Z'-1)) &^ x & hi
		binary.LittleEndian.PutUint64(b[i:], x|upper>>2)
	}
	for ; i < len(b); i++ {
		if c := b[i]; c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return dst
}

// Find is the line of it, drawn with o, holding the next (dir > 0: first
// after line from; dir < 0: last before it) match of query in an expanded
// tool's output, and whether there is one. Other items have no lines to
// land on (their matches are found by Contains).
func (r *Renderer) Find(it *events.Item, o Options, query string, from, dir int) (int, bool) {
	if it == nil || o.Width <= 0 || query == "" {
		return 0, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entry(it, o)
	b := e.c.body
	if b == nil {
		return 0, false
	}
	head := len(e.c.lines)
	from -= head
	if dir > 0 {
		from++
		for si := range b.segs {
			if row, ok := b.findIn(si, query, from, +1); ok {
				return head + row, true
			}
		}
		return 0, false
	}
	for si := len(b.segs) - 1; si >= 0; si-- {
		if row, ok := b.findIn(si, query, from, -1); ok {
			return head + row, true
		}
	}
	return 0, false
}

// findIn searches seg si for a match on a row at or after from (dir > 0)
// or before it (dir < 0), and returns that row.
func (b *wrapped) findIn(si int, query string, from, dir int) (int, bool) {
	s, t := b.segs[si], b.tabs[si]
	if t == nil || len(t.off) == 0 {
		return 0, false
	}
	first := b.start[si]
	end := first + b.segRowsTotal(si)
	if dir > 0 && from >= end || dir < 0 && from <= first {
		return 0, false
	}
	if dir > 0 {
		at := 0
		if from > first {
			line, sub := b.locate(si, from-first)
			at = int(t.off[line]) + sub*b.cw[si]
			at = min(at, len(s.raw))
		}
		i := smartIndex(s.raw, query, at)
		if i < 0 {
			return 0, false
		}
		return first + b.rowAt(si, i), true
	}
	to := len(s.raw)
	if from < end {
		line, sub := b.locate(si, from-first)
		to = int(t.off[line]) + sub*b.cw[si]
	}
	i := smartLastIndex(s.raw, query, to)
	if i < 0 {
		return 0, false
	}
	return first + b.rowAt(si, i), true
}

// segRowsTotal is the number of rows of seg si.
func (b *wrapped) segRowsTotal(si int) int {
	if si+1 < len(b.segs) {
		return b.start[si+1] - b.start[si]
	}
	return b.total - b.start[si]
}

// locate is the line and the row within it of seg si's row.
func (b *wrapped) locate(si, row int) (line, sub int) {
	t, cw, cum := b.tabs[si], b.cw[si], b.cum[si]
	k := sort.Search(len(cum), func(k int) bool { return cum[k] > row }) - 1
	line, at := k*cumStep, cum[k]
	for line < len(t.cells)-1 {
		n := rowsOf(t.cells[line], cw)
		if at+n > row {
			break
		}
		at += n
		line++
	}
	return line, row - at
}

// rowAt is the row of seg si showing byte offset i of its text. Within a
// wrapped line the row is estimated from bytes (exact for ASCII).
func (b *wrapped) rowAt(si, i int) int {
	t, cw, cum := b.tabs[si], b.cw[si], b.cum[si]
	line := sort.Search(len(t.off), func(k int) bool { return int(t.off[k]) > i }) - 1
	line = max(line, 0)
	row := cum[line/cumStep]
	for l := line / cumStep * cumStep; l < line; l++ {
		row += rowsOf(t.cells[l], cw)
	}
	n := rowsOf(t.cells[line], cw)
	return row + min((i-int(t.off[line]))/cw, n-1)
}
