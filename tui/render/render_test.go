package render

import (
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
	"github.com/perch-tui/perch/tools"
)

func newTestRenderer(th styles.Theme) *Renderer { return New(styles.New(th), th) }

// checkLines asserts the contract every caller relies on: lines fit the
// width, are valid UTF-8 and carry no control bytes but SGR.
func checkLines(t *testing.T, name string, lines []string, w int) {
	t.Helper()
	for i, l := range lines {
		if sw := ansi.StringWidth(l); sw > w {
			t.Errorf("%s: line %d is %d cells > %d: %q", name, i, sw, w, l)
		}
		if !utf8.ValidString(l) {
			t.Errorf("%s: line %d invalid UTF-8", name, i)
		}
		plain := ansi.Strip(l)
		for _, r := range plain {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				t.Errorf("%s: line %d has control %U: %q", name, i, r, l)
			}
		}
		if strings.Contains(l, "\n") {
			t.Errorf("%s: line %d holds a newline", name, i)
		}
		// Only SGR sequences may remain.
		rest := l
		for {
			j := strings.IndexByte(rest, 0x1b)
			if j < 0 {
				break
			}
			rest = rest[j:]
			k := strings.IndexByte(rest, 'm')
			if k < 0 || !isSGR(rest[:k+1]) {
				t.Errorf("%s: line %d has a non-SGR escape: %q", name, i, rest)
				break
			}
			rest = rest[k+1:]
		}
	}
}

func plainGolden(lines []string) []byte {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.TrimRight(ansi.Strip(l), " "))
		b.WriteString("\n")
	}
	return []byte(b.String())
}

func sortedNames(m map[string]*events.Item) []string {
	var names []string
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// TestGolden pins every renderer's layout (escape codes stripped) at 80
// and 120 columns, collapsed and expanded, and a few at 40.
func TestGolden(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	items := fixtures()
	for _, w := range []int{80, 120} {
		for _, name := range sortedNames(items) {
			for _, exp := range []bool{false, true} {
				mode := "collapsed"
				if exp {
					mode = "expanded"
				}
				t.Run(name+"/"+mode+"/w"+itoa(w), func(t *testing.T) {
					lines := r.Item(items[name], Options{Width: w, Expanded: exp, Spinner: styles.SpinnerFrame(2)})
					checkLines(t, name, lines, w)
					golden.RequireEqual(t, plainGolden(lines))
				})
			}
		}
	}
	for _, name := range []string{"user", "assistant", "assistant_calls", "cmd_legacy", "list_legacy", "notice_error", "read_legacy"} {
		t.Run(name+"/w40", func(t *testing.T) {
			lines := r.Item(items[name], Options{Width: 40})
			checkLines(t, name, lines, 40)
			golden.RequireEqual(t, plainGolden(lines))
		})
	}
	t.Run("todo_panel/w40", func(t *testing.T) {
		lines := TodoPanel(todoFixture(), 40, styles.New(styles.Dark))
		checkLines(t, "todo", lines, 40)
		golden.RequireEqual(t, plainGolden(lines))
	})
	t.Run("todo_panel/w80", func(t *testing.T) {
		lines := TodoPanel(todoFixture(), 80, styles.New(styles.Dark))
		checkLines(t, "todo", lines, 80)
		golden.RequireEqual(t, plainGolden(lines))
	})
	t.Run("selected", func(t *testing.T) {
		lines := r.Item(items["cmd_ok"], Options{Width: 80, Selected: true})
		golden.RequireEqual(t, plainGolden(lines))
	})
}

// TestGoldenColour keeps one coloured golden per theme to catch style
// regressions.
func TestGoldenColour(t *testing.T) {
	items := fixtures()
	for _, th := range []styles.Theme{styles.Dark, styles.Light, styles.NoColor} {
		t.Run(th.String(), func(t *testing.T) {
			r := newTestRenderer(th)
			var all []string
			for _, name := range []string{"user", "cmd_legacy", "patch", "read_legacy", "error", "notice_warn"} {
				all = append(all, r.Item(items[name], Options{Width: 80, Selected: name == "error"})...)
			}
			all = append(all, TodoPanel(todoFixture(), 80, styles.New(th))...)
			golden.RequireEqual(t, []byte(strings.Join(all, "\n")+"\n"))
		})
	}
}

func itoa(n int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+n/100%10)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10)))
}

func TestNarrowWidthsNeverOverflow(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	items := fixtures()
	for _, name := range sortedNames(items) {
		for w := 1; w <= 30; w++ {
			for _, o := range []Options{{Width: w}, {Width: w, Expanded: true, Selected: true, Spinner: "⠋"}} {
				checkLines(t, name, r.Item(items[name], o), w)
			}
		}
	}
	checkLines(t, "todo", TodoPanel(todoFixture(), 5, styles.New(styles.Dark)), 5)
}

func bigOutput(size int) string {
	var b strings.Builder
	b.Grow(size + 100)
	b.WriteString("Command cat huge.log exited with status 0.\n=== STDOUT (n lines) ===\n")
	for i := 0; b.Len() < size; i++ {
		b.WriteString("2026-01-01T00:00:00Z INFO \x1b[32mrequest\x1b[0m handled in 12ms path=/api/v1/things id=")
		b.WriteString(itoa(i % 1000))
		b.WriteString("\n")
	}
	return b.String()
}

// TestHugeOutputs bounds the cost of pathological tool outputs: a 20 MB
// output and a 2 MB single line, collapsed and expanded.
func TestHugeOutputs(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	cases := map[string]string{
		"20MB":        bigOutput(20 << 20),
		"2MB line":    "Command x exited with status 0.\n=== STDOUT (1 lines) ===\n" + strings.Repeat("abcdefghij", 200_000),
		"2MB generic": strings.Repeat("é世x", 2<<20/6),
	}
	for name, text := range cases {
		for _, exp := range []bool{false, true} {
			it := toolItem("execute_command", map[string]any{"command": "cat huge.log"}, events.ToolOK, &events.ToolResult{Text: text})
			if name == "2MB generic" {
				it.Tool.Name = "mystery"
			}
			start := time.Now()
			var lines []string
			if exp {
				lines = screens(t, r, it, Options{Width: 100, Expanded: true})
			} else {
				lines = r.Item(it, Options{Width: 100})
			}
			d := time.Since(start)
			// Well under 100 ms on a normal machine; the bound is loose
			// for -race and loaded CI.
			if d > slow(500*time.Millisecond) {
				t.Errorf("%s expanded=%v took %v", name, exp, d)
			}
			t.Logf("%s expanded=%v: %d lines in %v", name, exp, len(lines), d)
			checkLines(t, name, lines, 100)
		}
	}
	// A 2 MB user message and assistant reply must not freeze either.
	for _, kind := range []events.ItemKind{events.ItemUser, events.ItemAssistant, events.ItemNotice} {
		it := &events.Item{Kind: kind, Version: 1, Text: strings.Repeat("word ", 400_000) + strings.Repeat("x", 1<<20)}
		start := time.Now()
		lines := r.Item(it, Options{Width: 100})
		if d := time.Since(start); d > slow(time.Second) {
			t.Errorf("kind %v took %v", kind, d)
		}
		checkLines(t, kind.String(), lines, 100)
	}
}

// screens lays out three screens of an expanded item (its top, middle and
// bottom, 40 rows each) the way the transcript does, and fails when that
// styled more rows than a few blocks around them: the cost of showing an
// output must follow the screen, not the output.
func screens(t *testing.T, r *Renderer, it *events.Item, o Options) []string {
	t.Helper()
	before := r.Stats().RowsLaidOut
	h := r.Height(it, o)
	var out []string
	for _, at := range []int{0, h / 2, h - 40} {
		ls := r.Lines(it, o, at, at+40)
		if want := min(h, at+40) - max(at, 0); len(ls) != want {
			t.Errorf("Lines(%d, %d) of %d gave %d lines, want %d", at, at+40, h, len(ls), want)
		}
		out = append(out, ls...)
	}
	if n := r.Stats().RowsLaidOut - before; n > 6*blockRows {
		t.Errorf("three screens of a %d-line item styled %d rows", h, n)
	}
	return out
}

// slow scales a time bound for the race detector.
func slow(d time.Duration) time.Duration {
	if raceEnabled {
		return 10 * d
	}
	return d
}

func TestCache(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	it := fixtures()["assistant"]
	o := Options{Width: 80}
	a := r.Item(it, o)
	b := r.Item(it, o)
	if &a[0] != &b[0] {
		t.Error("second render was not served from cache")
	}
	if s := r.Stats(); s.Hits != 1 || s.Misses != 1 {
		t.Errorf("stats = %+v", s)
	}
	// Selecting does not re-render the markdown.
	r.Item(it, Options{Width: 80, Selected: true})
	if s := r.Stats(); s.Misses != 1 {
		t.Errorf("selection re-rendered: %+v", s)
	}
	// A version bump does.
	it.Version++
	it.Text = "changed"
	c := r.Item(it, o)
	if len(c) == 0 || !strings.Contains(ansi.Strip(c[0]), "changed") {
		t.Errorf("version bump not picked up: %q", c)
	}
	if s := r.Stats(); s.Entries != 1 {
		t.Errorf("stale version kept: %+v", s)
	}
	if h := r.Height(it, o); h != len(c) {
		t.Errorf("Height = %d, want %d", h, len(c))
	}
	r.Invalidate()
	if s := r.Stats(); s.Entries != 0 || s.Bytes != 0 {
		t.Errorf("Invalidate left %+v", s)
	}
}

func TestSpinnerRedrawsHeaderOnly(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	it := fixtures()["running"]
	a := r.Item(it, Options{Width: 80, Spinner: styles.SpinnerFrame(0)})
	b := r.Item(it, Options{Width: 80, Spinner: styles.SpinnerFrame(1)})
	if a[0] == b[0] {
		t.Error("spinner frame did not change the header")
	}
	if !strings.Contains(b[0], styles.SpinnerFrame(1)) {
		t.Errorf("header %q lacks the frame", b[0])
	}
	if s := r.Stats(); s.Misses != 1 {
		t.Errorf("spinner tick re-rendered the item: %+v", s)
	}
}

func TestCacheBounded(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	r.SetCacheLimit(256 << 10)
	for i := 0; i < 500; i++ {
		it := toolItem("mystery", nil, events.ToolOK, &events.ToolResult{Text: numbered("line", 50)})
		r.Item(it, Options{Width: 100, Expanded: true})
	}
	s := r.Stats()
	if s.Bytes > 256<<10 || s.Evictions == 0 {
		t.Errorf("cache not bounded: %+v", s)
	}
}

// TestKeyArg: the header's key argument is tools.KeyArg's (tools tests
// which argument each tool shows), made one clean line.
func TestKeyArg(t *testing.T) {
	it := toolItem("execute_command", map[string]any{"command": "go test\n./..."}, events.ToolRunning, nil)
	if got := keyArg(it.Tool); got != "go test⏎./..." {
		t.Errorf("keyArg = %q", got)
	}
	raw := &events.ToolItem{Name: "x", Call: events.ToolCall{ArgsRaw: "{broken"}}
	if got := keyArg(raw); got != "{broken" {
		t.Errorf("raw args: %q", got)
	}
}

func TestParseCommandText(t *testing.T) {
	// The renderer reads commands with events' one parser of maria's text.
	parseCommandText := func(text string) *events.CommandResult {
		return events.WithDetails(&events.ToolResult{Text: text}, tools.FormatCommand, events.ToolCall{}).Command
	}
	cr := parseCommandText("Command cat <<EOF\nhi\nEOF exited with status 2.\n=== STDOUT (2 lines) ===\nhi\n\n=== STDERR (1 lines) ===\noops")
	if cr == nil || cr.Command != "cat <<EOF\nhi\nEOF" || cr.ExitCode == nil || *cr.ExitCode != 2 || cr.Stdout != "hi\n" || cr.Stderr != "oops" {
		t.Fatalf("got %+v", cr)
	}
	cr = parseCommandText("Command sleep 5 timed out after 1000 seconds.")
	if cr == nil || !cr.TimedOut || cr.ExitCode != nil {
		t.Fatalf("timeout: %+v", cr)
	}
	cr = parseCommandText("Command x exited with status 0.\n=== STDERR (1 lines) ===\nonly err")
	if cr == nil || cr.Stdout != "" || cr.Stderr != "only err" {
		t.Fatalf("stderr only: %+v", cr)
	}
	if parseCommandText("something else") != nil {
		t.Error("parsed garbage")
	}
}

func TestHighlightLine(t *testing.T) {
	st := styles.New(styles.NoColor).Search.Current
	got := HighlightLine("\x1b[1mHello\x1b[0m hello HELLO", "hello", st)
	if ansi.Strip(got) != "Hello hello HELLO" {
		t.Errorf("text changed: %q", got)
	}
	rev := regexp.MustCompile(`\x1b\[[0-9;]*7m`)
	if n := len(rev.FindAllString(got, -1)); n != 3 {
		t.Errorf("want 3 highlighted matches, got %d in %q", n, got)
	}
	if got := HighlightLine("ÉCOLE école", "éCOLE", st); len(rev.FindAllString(got, -1)) != 2 {
		t.Errorf("unicode fold: %q", got)
	}
	if got := HighlightLine("abc", "", st); got != "abc" {
		t.Errorf("empty query: %q", got)
	}
	if spans := Match("aaaa", "aa"); len(spans) != 2 {
		t.Errorf("overlapping: %v", spans)
	}
}

func TestPlainText(t *testing.T) {
	items := fixtures()
	if got := PlainText(items["cmd_legacy"]); !strings.HasPrefix(got, "execute_command go test ./...\nCommand go test") {
		t.Errorf("tool plain text: %q", got)
	}
	if got := PlainText(items["hostile_user"]); strings.ContainsAny(got, "\x1b\r\u2066") {
		t.Errorf("unsanitized: %q", got)
	}
	if PlainText(nil) != "" {
		t.Error("nil item")
	}
	if got := PlainText(items["read_legacy"]); !strings.Contains(got, "package main") {
		t.Errorf("file content missing: %q", got)
	}
}

func TestConcurrentUse(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	items := fixtures()
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for _, name := range sortedNames(items) {
				r.Item(items[name], Options{Width: 60 + g})
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}
