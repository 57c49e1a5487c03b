package render

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/styles"
)

// chunkWords cuts s into pieces of n words each (with their whitespace),
// the way a streaming API sends a reply.
func chunkWords(s string, n int) []string {
	var out []string
	start, words := 0, 0
	for i := 1; i < len(s); i++ {
		if isSpace(s[i-1]) && !isSpace(s[i]) {
			words++
			if words == n {
				out = append(out, s[start:i])
				start, words = i, 0
			}
		}
	}
	return append(out, s[start:])
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' }

// chunkRandom cuts s into pieces of 1 to max bytes (UTF-8 may be split:
// deltas do not respect it either, and sanitize must cope).
func chunkRandom(s string, max int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 1))
	var out []string
	for len(s) > 0 {
		n := min(1+rng.IntN(max), len(s))
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func streamCorpus(t testing.TB) map[string]string {
	t.Helper()
	paths, err := filepath.Glob("testdata/mdstream/*.md")
	if err != nil || len(paths) == 0 {
		t.Fatalf("corpus: %v (%d files)", err, len(paths))
	}
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".md")] = string(b)
	}
	out["answer"] = longAnswer(3 << 10)
	return out
}

// streamInto feeds chunks to an open assistant item, rendering after each
// one with r at o, and calls check with the text so far and the lines.
// The item is closed at the end and rendered once more.
func streamInto(r *Renderer, chunks []string, o Options, check func(step int, text string, lines []string)) *events.Item {
	it := &events.Item{Kind: events.ItemAssistant, Open: true}
	for i, c := range chunks {
		it.Text += c
		it.Version++
		lines := r.Item(it, o)
		if check != nil {
			check(i, it.Text, lines)
		}
	}
	it.Open = false
	it.Version++
	if check != nil {
		check(len(chunks), it.Text, r.Item(it, o))
	}
	return it
}

// TestStreamedMarkdownEqualsOneShot renders every corpus text chunk by
// chunk, the way it streams in, and compares what is drawn with the render
// of the same text in one go: at every step for the word chunks, and at the
// end (the final view) for random byte chunks. They must be byte-identical.
func TestStreamedMarkdownEqualsOneShot(t *testing.T) {
	corpus := streamCorpus(t)
	ref := newTestRenderer(styles.Dark)
	oneShot := func(text string, w int) []string {
		return ref.Item(&events.Item{Kind: events.ItemAssistant, Text: text, Version: 1}, Options{Width: w})
	}
	widths := []int{24, 40, 80, 120}
	if raceEnabled {
		widths = []int{79, 80} // the race detector makes glamour ~10× slower
	}
	for _, name := range sortedKeys(corpus) {
		src := corpus[name]
		for _, w := range widths {
			t.Run(fmt.Sprintf("%s/w%d", name, w), func(t *testing.T) {
				chunkings := map[string][]string{
					"words4": chunkWords(src, 4),
					"bytes":  chunkRandom(src, max(7, len(src)/200), uint64(w)),
					"lines":  strings.SplitAfter(src, "\n"),
				}
				if raceEnabled && w == widths[0] {
					delete(chunkings, "words4") // compared at every step below
				}
				if raceEnabled && w == widths[1] {
					chunkings = map[string][]string{"words4": chunkings["words4"]}
				}
				for _, how := range sortedKeys(chunkings) {
					r := newTestRenderer(styles.Dark)
					// Every step is compared once per text; the other
					// runs compare the final view.
					every := how == "words4" && w == widths[1]
					last := len(chunkings[how])
					if len(chunkings[how]) == 0 {
						t.Fatalf("%s: no chunks", how)
					}
					streamInto(r, chunkings[how], Options{Width: w}, func(step int, text string, got []string) {
						if step < last && (!every || raceEnabled && step%4 != 0) {
							return
						}
						if _, _, open := boundary(sanitizedTrim(text), 0); open >= 0 && step < last {
							// A code block still open is drawn from
							// chunks (openCode): colours may differ there
							// until it closes.
							return
						}
						if want := oneShot(text, w); !sameRender(got, want) {
							t.Fatalf("%s step %d/%d: streamed render differs from the one-shot render\n%s",
								how, step, last, lineDiff(want, got))
						}
					})
					if n := len(r.streams); n != 0 {
						t.Errorf("%s: %d stream states left after the item closed", how, n)
					}
				}
			})
		}
	}
}

func sameRender(a, b []string) bool { return slices.Equal(a, b) }

func sanitizedTrim(s string) string { return sanitize.Text(strings.TrimSpace(s)) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func lineDiff(want, got []string) string {
	var b strings.Builder
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g || i >= len(want) || i >= len(got) {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i, w, g)
			if b.Len() > 2000 {
				break
			}
		}
	}
	return b.String()
}

// TestStreamedGolden pins the final view of each corpus text streamed in
// 4-word chunks at 40 and 100 columns (escape codes stripped), so that a
// change in what glamour draws shows up here as well as in the one-shot
// comparison above.
func TestStreamedGolden(t *testing.T) {
	corpus := streamCorpus(t)
	for _, name := range sortedKeys(corpus) {
		for _, w := range []int{40, 100} {
			t.Run(fmt.Sprintf("%s/w%d", name, w), func(t *testing.T) {
				r := newTestRenderer(styles.Dark)
				it := streamInto(r, chunkWords(corpus[name], 4), Options{Width: w}, nil)
				lines := r.Item(it, Options{Width: w})
				checkLines(t, name, lines, w)
				golden.RequireEqual(t, plainGolden(lines))
			})
		}
	}
}

// TestStreamedMarkdownWork: a 20 KB reply (6 KB under the race detector) streamed in 4-word chunks sends
// little more than its own length through glamour at each width, where
// rendering it whole after every chunk sends hundreds of times that. Texts
// that cannot be split (link definitions, HTML) still render, whole.
func TestStreamedMarkdownWork(t *testing.T) {
	size := 20 << 10
	if raceEnabled {
		size = 6 << 10
	}
	text := longAnswer(size)
	chunks := chunkWords(text, 4)
	r := newTestRenderer(styles.Dark)
	streamInto(r, chunks, Options{Width: 100}, func(step int, _ string, _ []string) {
		if step < len(chunks) && (len(r.streams) != 1 || r.streams[0].whole) {
			t.Fatalf("step %d: the split was given up", step)
		}
	})
	got := r.Stats().MarkdownBytes
	quadratic := 0
	for i := range chunks {
		quadratic += len(strings.Join(chunks[:i+1], ""))
	}
	t.Logf("%d chunks, %d bytes: %d bytes through glamour (%.1f× the text; whole renders would be %.0f×)",
		len(chunks), len(text), got, float64(got)/float64(len(text)), float64(quadratic)/float64(len(text)))
	// The open tail is one block (a paragraph, a list, a code block), re-
	// rendered with each chunk: a few kilobytes at most here.
	if got > 60*len(text) {
		t.Errorf("streamed render sent %d bytes through glamour for a %d-byte reply: the prefix is not reused", got, len(text))
	}

	for name, tail := range map[string]string{
		"reference":  "\n\nSee [x].\n\n[x]: https://example.com\n",
		"html":       "\n\n<div>\n\nhi\n\n</div>\n",
		"quote_code": "\n\n> ```\n> x\n>\n> ```\n",
	} {
		r := newTestRenderer(styles.Dark)
		full := text[:4<<10] + tail
		it := streamInto(r, chunkWords(full, 4), Options{Width: 80}, nil)
		if got, want := r.Item(it, Options{Width: 80}), newTestRenderer(styles.Dark).Item(it, Options{Width: 80}); !sameRender(got, want) {
			t.Errorf("%s: final render differs:\n%s", name, lineDiff(want, got))
		}
	}
}

// TestBoundary pins where a text may be cut: after a blank line, before a
// line that cannot continue what came before.
func TestBoundary(t *testing.T) {
	cases := []struct {
		name, text string
		want       int // -1: whole
	}{
		{"paragraphs", "a\n\nb\n\nc", len("a\n\nb\n\n")},
		{"partial last line decides", "a\n\n**b", len("a\n\n")},
		{"no blank line", "a\nb\nc", 0},
		{"list goes on", "- a\n\n- b", 0},
		{"list item partial", "- a\n\n-", 0},
		{"ordered list goes on", "1. a\n\n2. b", 0},
		{"number still arriving", "a\n\n12", 0},
		{"number paragraph", "a\n\n12\n", len("a\n\n")},
		{"list then paragraph", "- a\n\nb", len("- a\n\n")},
		{"indented continuation", "- a\n\n  b", 0},
		{"thematic break", "- a\n\n---", len("- a\n\n")},
		{"blank in fence", "```\na\n\nb\n```", 0},
		{"after fence", "```\na\n\nb\n```\n\nc", len("```\na\n\nb\n```\n\n")},
		{"short close", "````\na\n```\n\nb", 0},
		{"tilde fence", "~~~\n```\n\nb\n~~~\n\nc", len("~~~\n```\n\nb\n~~~\n\n")},
		{"fence opener arriving", "a\n\n``", len("a\n\n")},
		{"fence in list item", "- ```\n  x\n\n  y\n  ```\n\nz", len("- ```\n  x\n\n  y\n  ```\n\n")},
		{"fence in list item cut short", "- ```\n  x\n\nz\n\nw", -1},
		{"definition", "t\n: d\n\np\n\nq", -1},
		{"definition after blank", "t\n\n: d", -1},
		{"html", "a\n\n<div>\n\nb", -1},
		{"reference", "a\n\nb\n\n[x]: /u", -1},
		{"reference in list", "a\n\n- [x]: /u", -1},
		{"fence in quote", "a\n\n> ```\n> b", -1},
		{"reference in code", "a\n\n```\n[x]: /u\n```", len("a\n\n")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, whole, _ := boundary(c.text, 0)
			if whole {
				b = -1
			}
			if b != c.want {
				t.Errorf("boundary(%q) = %d, want %d", c.text, b, c.want)
			}
		})
	}
}

// TestBoundaryOpenFence: the scan says where a fenced block still open at
// the end starts, only for one at the top level.
func TestBoundaryOpenFence(t *testing.T) {
	cases := []struct {
		text string
		want int
	}{
		{"a\n\n```go\nx\n\ny", len("a\n\n")},
		{"a\n\n```go\nx\n```\n\nb", -1},
		{"a\n\n```go\nx\n```", len("a\n\n")}, // "```x" would not close it
		{"a\n\n- ```\n  x", -1},
		{"a\n\n  ```\n  x", -1},
		{"a\n```\nx", len("a\n")},
		{"a\n\n```", -1}, // the opener itself still arriving
	}
	for _, c := range cases {
		if _, _, open := boundary(c.text, 0); open != c.want {
			t.Errorf("boundary(%q): open fence at %d, want %d", c.text, open, c.want)
		}
	}
}

// TestStreamedCodeBlockChunks: a long code block still arriving is drawn
// from chunks rendered once, not re-rendered whole on every change, and
// the final view is still the one-shot render.
func TestStreamedCodeBlockChunks(t *testing.T) {
	var b strings.Builder
	b.WriteString("Here is the file:\n\n```go\n")
	for i := range map[bool]int{false: 200, true: 100}[raceEnabled] {
		fmt.Fprintf(&b, "func f%d(x int) int { return x + %d } // line %d\n", i, i, i)
	}
	b.WriteString("```\n\nDone.")
	text := b.String()
	chunks := chunkWords(text, 4)
	r := newTestRenderer(styles.Dark)
	var mid []string
	big, prev, most := 0, 0, 0
	it := streamInto(r, chunks, Options{Width: 100}, func(step int, _ string, lines []string) {
		if step == len(chunks)/2 {
			mid = lines
		}
		n := r.Stats().MarkdownBytes
		if d := n - prev; d > 2<<10 {
			big++ // the block rendered whole: once it closes, until "Done."
		} else {
			most = max(most, d)
		}
		prev = n
	})
	got := r.Stats().MarkdownBytes
	t.Logf("%d bytes, %d chunks: %d bytes through glamour (%.1f×); at most %d bytes a frame but in %d frames",
		len(text), len(chunks), got, float64(got)/float64(len(text)), most, big)
	if big > 4 {
		t.Errorf("%d frames rendered over 2 KB: the open code block is re-rendered whole", big)
	}
	if len(mid) < 40 {
		t.Errorf("half-way through, %d lines drawn: the code so far should show", len(mid))
	}
	want := newTestRenderer(styles.Dark).Item(it, Options{Width: 100})
	if final := r.Item(it, Options{Width: 100}); !sameRender(final, want) {
		t.Errorf("final view differs from the one-shot render:\n%s", lineDiff(want, final))
	}
}

// TestStreamTailDrawsNothing: a tail that draws nothing yet (a fence or
// a heading marker just arrived) neither breaks the view nor turns the
// split off.
func TestStreamTailDrawsNothing(t *testing.T) {
	for _, tail := range []string{"```go", "```", "~~~", "#"} {
		r := newTestRenderer(styles.Dark)
		it := &events.Item{Kind: events.ItemAssistant, Open: true, Text: "First paragraph.\n\nSecond one.", Version: 1}
		r.Item(it, Options{Width: 60})
		it.Text += "\n\n" + tail
		it.Version++
		got := r.Item(it, Options{Width: 60})
		want := newTestRenderer(styles.Dark).Item(&events.Item{Kind: events.ItemAssistant, Text: it.Text, Version: 1}, Options{Width: 60})
		if !sameRender(got, want) {
			t.Errorf("tail %q:\n%s", tail, lineDiff(want, got))
		}
		if len(r.streams) != 1 || r.streams[0].whole || r.streams[0].src == "" {
			t.Errorf("tail %q: the split was given up", tail)
		}
	}
}

// TestStreamReplaced: a final text that is not the deltas' text (a
// provider's own final form) is rendered as itself.
func TestStreamReplaced(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	it := streamInto(r, chunkWords(longAnswer(3<<10), 4), Options{Width: 80}, nil)
	it.Open = true
	it.Text = "# Rewritten\n\nAll new.\n\n" + it.Text[:len(it.Text)/2]
	it.Version++
	got := r.Item(it, Options{Width: 80})
	want := newTestRenderer(styles.Dark).Item(&events.Item{Kind: events.ItemAssistant, Text: it.Text, Version: 1}, Options{Width: 80})
	if !sameRender(got, want) {
		t.Errorf("replaced text:\n%s", lineDiff(want, got))
	}
}

// longAnswer is a deterministic markdown reply of at least n bytes shaped
// like an agent's: headings, paragraphs of long lines, lists, code fences,
// tables and quotes.
func longAnswer(n int) string {
	words := strings.Fields("the parser reads each token and the loop checks the bound before it " +
		"advances so a missing case shows up as an off-by-one in the last column of the report " +
		"which the test did not cover until now because the fixture was too short")
	var b strings.Builder
	for s := 1; b.Len() < n; s++ {
		fmt.Fprintf(&b, "## Step %d: %s\n\n", s, words[s%len(words)])
		for p := range 2 {
			for i := range 60 {
				b.WriteString(words[(s*7+p*13+i)%len(words)])
				if i%17 == 16 {
					b.WriteString(" **" + words[i%len(words)] + "**")
				}
				b.WriteByte(' ')
			}
			b.WriteString("`code` end.\n\n")
		}
		for i := range 4 {
			fmt.Fprintf(&b, "%d. item %d: %s %s\n", i+1, i, words[(s+i)%len(words)], words[(s+2*i)%len(words)])
		}
		b.WriteString("   - nested under the last item\n\n")
		b.WriteString("```go\n")
		for i := range 12 {
			fmt.Fprintf(&b, "func step%d_%d(x int) int {\n\treturn x + %d // %s\n}\n", s, i, i, words[i%len(words)])
			if i%4 == 3 {
				b.WriteString("\n")
			}
		}
		b.WriteString("```\n\n")
		if s%2 == 0 {
			b.WriteString("| file | lines | status |\n|---|---:|---|\n")
			for i := range 4 {
				fmt.Fprintf(&b, "| src/%s.go | %d | %s |\n", words[(s+i)%len(words)], 10*s+i, words[i%len(words)])
			}
			b.WriteString("\n")
		} else {
			b.WriteString("> " + strings.Join(words[:12], " ") + "\n> " + strings.Join(words[12:20], " ") + "\n\n")
		}
	}
	return strings.TrimSpace(b.String())
}

// BenchmarkStreamedReply feeds a markdown reply in 4-word chunks and
// renders the item after each chunk, as the transcript does on every
// frame: "whole" renders the text from the start each time (the item is
// not open, so no prefix is kept: the old path), "prefix" keeps the stable
// prefix. last100 is the mean cost of a frame over the last 100 chunks.
// whole/20KB takes about a minute: it is the quadratic baseline.
func BenchmarkStreamedReply(b *testing.B) {
	for _, c := range []struct {
		mode string
		kb   int
	}{{"whole", 5}, {"whole", 20}, {"prefix", 5}, {"prefix", 10}, {"prefix", 20}} {
		chunks := chunkWords(longAnswer(c.kb<<10), 4)
		b.Run(fmt.Sprintf("%s/%dKB", c.mode, c.kb), func(b *testing.B) {
			var last time.Duration
			frames := 0
			for b.Loop() {
				r := newTestRenderer(styles.Dark)
				it := &events.Item{Kind: events.ItemAssistant, Open: c.mode == "prefix"}
				for i, ch := range chunks {
					it.Text += ch
					it.Version++
					start := time.Now()
					r.Item(it, Options{Width: 100})
					if i >= len(chunks)-100 {
						last += time.Since(start)
						frames++
					}
				}
			}
			b.ReportMetric(float64(len(chunks)), "chunks")
			b.ReportMetric(float64(last.Microseconds())/float64(frames), "last100-µs/frame")
		})
	}
}

// FuzzStreamedMarkdown streams arbitrary markdown in chunks of step bytes:
// the final view must be the one-shot render, and no step may panic or
// draw a line wider than the width.
func FuzzStreamedMarkdown(f *testing.F) {
	for _, src := range streamCorpus(f) {
		f.Add(src[:min(len(src), 1500)], 5, 60)
	}
	f.Add("a\n\n- ```\n  x\n\nz\n\n```\ny\n\nw\n```", 3, 40)
	f.Add("t\n: d\n\n- a\n   - b\n\n```\n\n\n```\n\n#\n\nq", 2, 30)
	f.Fuzz(func(t *testing.T, src string, step, w int) {
		if len(src) > 2048 {
			return
		}
		step = max(step%64, 1+len(src)/256) // at most 256 frames
		w = max(w%160, 1) + 8
		var chunks []string
		for s := src; len(s) > 0; {
			n := min(step, len(s))
			chunks = append(chunks, s[:n])
			s = s[n:]
		}
		stuck := time.AfterFunc(slow(30*time.Second), func() {
			panic(fmt.Sprintf("streaming %q in %d-byte chunks at width %d takes over 30 s", src, step, w))
		})
		defer stuck.Stop()
		r := newTestRenderer(styles.Dark)
		it := streamInto(r, chunks, Options{Width: w}, func(_ int, _ string, lines []string) {
			checkLines(t, "streamed", lines, w)
		})
		got := r.Item(it, Options{Width: w})
		want := newTestRenderer(styles.Dark).Item(&events.Item{Kind: events.ItemAssistant, Text: it.Text, Version: 1}, Options{Width: w})
		if !sameRender(got, want) {
			t.Errorf("final view differs from the one-shot render of %q:\n%s", src, lineDiff(want, got))
		}
	})
}

// TestStreamedRandomDocs builds documents from blocks that sit next to
// each other in every order (lists before indented text, fences in list
// items, definitions, nested lists, empty fences, setext underlines …),
// streams each in random chunks and compares the final view with the
// one-shot render.
func TestStreamedRandomDocs(t *testing.T) {
	blocks := []string{
		"A paragraph with **bold** and `code`.", "# Heading", "Setext\n---", "Setext\n===",
		"- a\n- b", "- a\n\n- b", "1. one\n2. two", "3) three", "- a\n   - nested\n     - deeper",
		"```go\nx := 1\n\ny := 2\n```", "~~~\n~~~", "```\n```", "```py\n\n\n```", "    indented\n\n    code",
		"> quote\n> - in it", "> a\n\n> b", "| a | b |\n|---|---|\n| 1 | 2 |", "---", "***",
		"Term\n: definition", "- ```\n  in item\n\n  more\n  ```", "  indented paragraph", "2024 is a number.",
		"-not a list", "*emphasis* line", "+ plus", ":colon", "[x] not a reference", "#",
		"text\n  continued\n    more",
	}
	n := 40
	if raceEnabled {
		n = 8
	}
	for seed := range n {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		var parts []string
		for range 3 + rng.IntN(8) {
			parts = append(parts, blocks[rng.IntN(len(blocks))])
		}
		seps := []string{"\n\n", "\n\n\n", "\n"}
		var b strings.Builder
		for i, p := range parts {
			if i > 0 {
				b.WriteString(seps[rng.IntN(len(seps))])
			}
			b.WriteString(p)
		}
		src := b.String()
		w := 20 + rng.IntN(100)
		r := newTestRenderer(styles.Dark)
		it := streamInto(r, chunkRandom(src, 1+rng.IntN(12), uint64(seed)), Options{Width: w}, nil)
		got := r.Item(it, Options{Width: w})
		want := newTestRenderer(styles.Dark).Item(&events.Item{Kind: events.ItemAssistant, Text: it.Text, Version: 1}, Options{Width: w})
		if !sameRender(got, want) {
			t.Errorf("seed %d, width %d, %q:\n%s", seed, w, src, lineDiff(want, got))
		}
	}
}
