package render

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
)

func TestSmartIndex(t *testing.T) {
	long := strings.Repeat("x", findChunk-2) + "NeedLe" + strings.Repeat("y", findChunk) + "needle"
	cases := []struct {
		s, q       string
		from, want int
	}{
		{"hello world", "world", 0, 6},
		{"hello World", "world", 0, 6},  // no capitals: any case
		{"hello world", "World", 0, -1}, // capitals: exact
		{"a b a", "a", 1, 4},
		{long, "needle", 0, findChunk - 2}, // across a chunk's cut
		{long, "needle", findChunk, 2*findChunk + 4},
		{long, "NeedLe", 0, findChunk - 2},
		{"Ünïcode ÜNÏ", "ünï", 2, 10},
		{"abc", "abc", 4, -1},
	}
	for _, c := range cases {
		if got := smartIndex(c.s, c.q, c.from); got != c.want {
			t.Errorf("smartIndex(%.20q…, %q, %d) = %d, want %d", c.s, c.q, c.from, got, c.want)
		}
	}
	if got := smartLastIndex(long, "needle", len(long)); got != 2*findChunk+4 {
		t.Errorf("smartLastIndex = %d", got)
	}
	if got := smartLastIndex(long, "needle", 2*findChunk+4); got != findChunk-2 {
		t.Errorf("smartLastIndex before the last = %d", got)
	}
	if got := smartLastIndex(long, "needle", findChunk-2); got != -1 {
		t.Errorf("smartLastIndex before the first = %d", got)
	}
}

// TestFindInHugeOutput: search finds matches anywhere in a 30 MB output
// (PlainText keeps only its head and tail), lands on the rows that show
// them, forwards and backwards, and lays out only those screens.
func TestFindInHugeOutput(t *testing.T) {
	size := 30 << 20
	if raceEnabled {
		size = 3 << 20
	}
	it := bigRead(size)
	text := it.Tool.Result.Text
	// Two markers far inside, past what PlainText keeps.
	lines := size / 48
	marks := []int{lines * 7 / 10, lines * 9 / 10}
	for _, at := range marks {
		old := "case " + itoaN(at) + ":"
		if !strings.Contains(text, old) {
			t.Fatalf("fixture has no %q", old)
		}
		text = strings.Replace(text, old, "case ZEBRA"+itoaN(at)+":", 1)
	}
	it.Tool.Result.Text = text
	if strings.Contains(PlainText(it), "zebra") || strings.Contains(PlainText(it), "ZEBRA") {
		t.Fatal("the markers are within PlainText's bound: the test proves nothing")
	}
	start := time.Now()
	if !Contains(it, "zebra") || Contains(it, "giraffe") || !Contains(it, "tables.go") {
		t.Fatal("Contains")
	}
	r := newTestRenderer(styles.Dark)
	o := Options{Width: 100, Expanded: true}
	before := r.Stats().RowsLaidOut
	h := r.Height(it, o)
	var rows []int
	for from := -1; ; {
		row, ok := r.Find(it, o, "zebra", from, +1)
		if !ok {
			break
		}
		rows = append(rows, row)
		from = row
		if len(rows) > 2 {
			t.Fatalf("found more matches than there are: %v", rows)
		}
	}
	if len(rows) != 2 {
		t.Fatalf("found %v, want two rows", rows)
	}
	for i, row := range rows {
		ls := r.Lines(it, o, row, row+1)
		if len(ls) != 1 || !strings.Contains(ansi.Strip(ls[0]), "ZEBRA"+itoaN(marks[i])) {
			t.Errorf("row %d of %d is %q, want the marker", row, h, ls)
		}
	}
	if row, ok := r.Find(it, o, "zebra", h, -1); !ok || row != rows[1] {
		t.Errorf("backwards from the end: %d %v, want %d", row, ok, rows[1])
	}
	if row, ok := r.Find(it, o, "zebra", rows[1], -1); !ok || row != rows[0] {
		t.Errorf("backwards from the last: %d %v, want %d", row, ok, rows[0])
	}
	if _, ok := r.Find(it, o, "zebra", rows[0], -1); ok {
		t.Error("backwards from the first found one")
	}
	if n := r.Stats().RowsLaidOut - before; n > 4*blockRows {
		t.Errorf("searching styled %d rows", n)
	}
	if d := time.Since(start); d > slow(5*time.Second) {
		t.Errorf("took %v", d)
	}
}

func itoaN(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestExpandedWrapsLongLines: an expanded one-line output shows all of it,
// wrapped to the width (collapsed it is one cut row), with the numbers of
// a numbered file on the first row of each line only.
func TestExpandedWrapsLongLines(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	line := strings.Repeat("0123456789", 100)
	it := toolItem("execute_command", map[string]any{"command": "cat"}, events.ToolOK,
		&events.ToolResult{Text: "Command cat exited with status 0.\n=== STDOUT (1 lines) ===\n" + line})
	collapsed := r.Item(it, Options{Width: 54})
	o := Options{Width: 54, Expanded: true}
	all := r.Item(it, o)
	// 54 - gutter 2 - rail 2 = 50 cells a row: 1,000 bytes are 20 rows.
	if len(collapsed) != 2 || len(all) != 21 || r.Height(it, o) != 21 {
		t.Fatalf("collapsed %d lines, expanded %d (height %d), want 2 and 21", len(collapsed), len(all), r.Height(it, o))
	}
	var got strings.Builder
	for _, l := range all[1:] {
		got.WriteString(strings.TrimPrefix(ansi.Strip(l), "  │ "))
	}
	if got.String() != line {
		t.Errorf("wrapped rows do not give the line back:\n%s", got.String())
	}
	checkLines(t, "wrapped", all, 54)

	read := toolItem("read_file", map[string]any{"path": "a.go"}, events.ToolOK, &events.ToolResult{
		Text: "File: a.go (lines 1-2 (2 lines))\n L1 | \tx := \"" + strings.Repeat("é", 70) + "\"\n L2 | y"})
	ls := r.Item(read, Options{Width: 54, Expanded: true})
	var plain []string
	for _, l := range ls[1:] {
		plain = append(plain, ansi.Strip(l))
	}
	want := []string{
		"  │ 1     x := \"" + strings.Repeat("é", 38), // 48 cells: 50 less "1 "
		"  │   " + strings.Repeat("é", 32) + "\"",
		"  │ 2 y",
	}
	if strings.Join(plain, "\n") != strings.Join(want, "\n") {
		t.Errorf("numbered wrap:\n%s\nwant\n%s", strings.Join(plain, "\n"), strings.Join(want, "\n"))
	}
	checkLines(t, "numbered", ls, 54)
}

func TestLowerASCII(t *testing.T) {
	var all []byte
	for c := 0; c < 256; c++ {
		all = append(all, byte(c))
	}
	for _, s := range []string{string(all), "Hello, WORLD! @[`{ AZaz", "ÄÖÜ straße ZEBRA" + string(all[60:100])} {
		for cut := 0; cut < 9 && cut <= len(s); cut++ {
			in := s[cut:]
			got := string(lowerASCII([]byte("x"), in))
			want := "x" + string(func() []byte {
				b := []byte(in)
				for i, c := range b {
					if c >= 'A' && c <= 'Z' {
						b[i] = c + 32
					}
				}
				return b
			}())
			if got != want {
				t.Errorf("lowerASCII(%q) = %q, want %q", in, got, want)
			}
		}
	}
}

func BenchmarkContains30MB(b *testing.B) {
	it := bigRead(30 << 20)
	b.SetBytes(int64(len(it.Tool.Result.Text)))
	for b.Loop() {
		if Contains(it, "zebra") {
			b.Fatal("found")
		}
	}
}

// TestFoldIndex checks the IndexByte-driven search against lowering the
// text and strings.Index, over texts dense with near misses.
func TestFoldIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alpha := "abAB zZé\n"
	for n := 0; n < 3000; n++ {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteByte(alpha[rng.IntN(len(alpha))])
		}
		s := b.String()
		q := strings.ToLower(string([]byte{alpha[rng.IntN(6)], alpha[rng.IntN(6)], alpha[rng.IntN(6)]})[:1+rng.IntN(3)])
		want := strings.Index(string(lowerASCII(nil, s)), q)
		if got := foldIndex(s, q); got != want {
			t.Fatalf("foldIndex(%q, %q) = %d, want %d", s, q, got, want)
		}
	}
}

// TestPrepare: the work Prepare returns builds the line tables that
// expanding then uses (none is built again), it runs beside rendering
// (under -race), and once done Prepare has nothing left to do.
func TestPrepare(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	for name, it := range map[string]*events.Item{"read": bigRead(8 << 20), "line": longLine(2 << 20)} {
		before := r.Stats().Tables
		work := r.Prepare(it, 100)
		if work == nil {
			t.Fatalf("%s: nothing to prepare", name)
		}
		done := make(chan struct{})
		go func() { work(); close(done) }()
		r.Item(it, Options{Width: 100}) // collapsed, meanwhile
		<-done
		if got := r.Stats().Tables - before; got != 1 {
			t.Errorf("%s: prepare built %d tables, want 1", name, got)
		}
		if r.Prepare(it, 100) != nil {
			t.Errorf("%s: prepared twice", name)
		}
		r.Height(it, Options{Width: 100, Expanded: true})
		r.Height(it, Options{Width: 70, Expanded: true})
		if got := r.Stats().Tables - before; got != 1 {
			t.Errorf("%s: expanding at two widths built %d tables in all, want the prepared one", name, got)
		}
	}
	small := toolItem("execute_command", map[string]any{"command": "ls"}, events.ToolOK, &events.ToolResult{Text: "a\nb"})
	if r.Prepare(small, 100) != nil {
		t.Error("a small output has work to prepare")
	}
}

// TestGrowingOutput: a running tool's output that grows (chunks split mid
// line) extends its line table; the expanded layout matches a renderer
// that sees the whole text at once, and old versions' tables are replaced,
// not kept.
func TestGrowingOutput(t *testing.T) {
	full := bigRead(2 << 20).Tool.Result.Text
	it := toolItem("read_file", map[string]any{"path": "tables.go"}, events.ToolRunning, &events.ToolResult{})
	r := newTestRenderer(styles.Dark)
	o := Options{Width: 90, Expanded: true}
	for at := 300 << 10; ; at += 123_457 {
		at = min(at, len(full))
		it.Tool.Result.Text = full[:at]
		it.Version++
		h := r.Height(it, o)
		fresh := newTestRenderer(styles.Dark)
		if want := fresh.Height(it, o); h != want {
			t.Fatalf("at %d bytes: height %d, a fresh renderer says %d", at, h, want)
		}
		if got, want := r.Lines(it, o, h-5, h), fresh.Lines(it, o, h-5, h); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("at %d bytes: last lines differ:\n%q\n%q", at, got, want)
		}
		if at == len(full) {
			break
		}
	}
	if n := len(r.tables); n != 1 {
		t.Errorf("%d tables kept for one item", n)
	}
	r.Forget(it)
	if n := len(r.tables); n != 0 {
		t.Errorf("%d tables kept after Forget", n)
	}
}

// TestPrepareOncePerVersion: Prepare is asked on every transcript key
// while a big tool is selected; finding its segs costs milliseconds, so
// after the first call it answers from what it saw until the item changes.
func TestPrepareOncePerVersion(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	it := longLine(2 << 20)
	if r.Prepare(it, 100) == nil {
		t.Fatal("nothing to prepare")
	}
	start := time.Now()
	for range 1000 {
		if r.Prepare(it, 100) != nil {
			t.Fatal("prepared again")
		}
	}
	// 1,000 parses of a 2 MB output would take seconds.
	if d := time.Since(start); d > slow(100*time.Millisecond) {
		t.Errorf("1,000 repeated Prepare calls took %v", d)
	}
	it.Version++
	it.Tool.Result.Text += "x"
	if r.Prepare(it, 100) == nil {
		t.Error("a new version has nothing to prepare")
	}
}

// memStore is a BodyStore in memory, for the timeline's stored texts.
type memStore struct{ b []byte }

func (m *memStore) Put(s string) (int64, error) {
	off := int64(len(m.b))
	m.b = append(m.b, s...)
	return off, nil
}

func (m *memStore) Get(off int64, n int) (string, error) { return string(m.b[off : off+int64(n)]), nil }

func (m *memStore) ReadAt(p []byte, off int64) (int, error) { return copy(p, m.b[off:]), nil }

// TestContainsStoredOutput: a tool output kept in the timeline's store is
// searched a window at a time — a match across two windows, one in the
// last bytes, and the case rules are what they are in memory.
func TestContainsStoredOutput(t *testing.T) {
	size := 3 * storeWindow
	text := []byte(strings.Repeat("abcdefgh\n", size/9+1))[:size]
	copy(text[storeWindow-3:], "NeedLe") // across the first cut
	copy(text[size-len("tail-mark"):], "tail-mark")
	tl := events.NewTimeline()
	tl.SetBodyStore(&memStore{}, events.SpillOptions{})
	call := events.ToolCall{ID: "c1", Name: "execute_command", Args: []byte(`{"command":"cat big"}`)}
	tl.Apply(events.Event{Kind: events.KindAssistantMessage, ID: "a1", ToolCalls: []events.ToolCall{call}})
	tl.Apply(events.Event{Kind: events.KindPostToolCall, ID: "p1", Tool: &events.ToolEvent{Call: call, Result: &events.ToolResult{Text: string(text)}}})
	it := tl.Items()[1]
	if !it.Tool.OutputStored() {
		t.Fatal("the output was not stored")
	}
	for q, want := range map[string]bool{"needle": true, "NeedLe": true, "NEEDLE": false, "tail-mark": true, "absent": false, "cat big": true} {
		if got := Contains(it, q); got != want {
			t.Errorf("Contains(%q) = %v, want %v", q, got, want)
		}
	}
}
