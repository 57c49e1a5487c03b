package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
)

// mixedSession is n items in a realistic proportion: each turn is a user
// message, an assistant reply, three tool calls and now and then a notice.
// Texts vary per item so glamour and chroma do real work.
func mixedSession(n int) []*events.Item {
	fx := fixtures()
	kinds := []string{"user", "assistant", "cmd_head", "read_legacy", "search_legacy", "assistant", "patch", "list_head", "generic", "notice_info"}
	items := make([]*events.Item, 0, n)
	for i := 0; len(items) < n; i++ {
		src := fx[kinds[i%len(kinds)]]
		it := *src
		if it.Kind == events.ItemAssistant || it.Kind == events.ItemUser {
			it.Text = fmt.Sprintf("Turn %d. ", i) + it.Text
		}
		items = append(items, &it)
	}
	return items
}

// BenchmarkSessionCold renders 1,000 mixed items at width 100 with an
// empty cache (a resize, or opening a session).
func BenchmarkSessionCold(b *testing.B) {
	items := mixedSession(1000)
	r := newTestRenderer(styles.Dark)
	b.ReportAllocs()
	for b.Loop() {
		r.Invalidate()
		for _, it := range items {
			r.Item(it, Options{Width: 100})
		}
	}
}

// BenchmarkSessionWarm is the same with every item cached: what a frame
// costs when nothing changed.
func BenchmarkSessionWarm(b *testing.B) {
	items := mixedSession(1000)
	r := newTestRenderer(styles.Dark)
	for _, it := range items {
		r.Item(it, Options{Width: 100})
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, it := range items {
			r.Item(it, Options{Width: 100})
		}
	}
}

// BenchmarkGlamourItem is one assistant reply (~0.5 KB markdown with a
// list, code fence and table) rendered from scratch, renderer reused.
func BenchmarkGlamourItem(b *testing.B) {
	r := newTestRenderer(styles.Dark)
	it := fixtures()["assistant"]
	r.Item(it, Options{Width: 100}) // create the glamour renderer once
	b.ReportAllocs()
	for b.Loop() {
		it.Version++
		r.Item(it, Options{Width: 100})
	}
}

// BenchmarkToolCollapsed is a typical command result, uncached.
func BenchmarkToolCollapsed(b *testing.B) {
	r := newTestRenderer(styles.Dark)
	it := fixtures()["cmd_head"]
	b.ReportAllocs()
	for b.Loop() {
		it.Version++
		r.Item(it, Options{Width: 100})
	}
}

func BenchmarkHuge20MBCollapsed(b *testing.B) {
	r := newTestRenderer(styles.Dark)
	text := bigOutput(20 << 20)
	it := toolItem("execute_command", map[string]any{"command": "cat"}, events.ToolOK, &events.ToolResult{Text: text})
	for b.Loop() {
		it.Version++
		r.Item(it, Options{Width: 100})
	}
}

func BenchmarkSpinnerFrame(b *testing.B) {
	r := newTestRenderer(styles.Dark)
	it := fixtures()["running"]
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Item(it, Options{Width: 100, Spinner: styles.SpinnerFrame(i)})
	}
}

// bigRead is a read_file result of about size bytes in maria's HEAD text
// (" L0001 | code" rows under a "File:" line), tab-indented Go.
func bigRead(size int) *events.Item {
	var b strings.Builder
	b.Grow(size + 200)
	n := size / 48
	fmt.Fprintf(&b, "File: tables.go (lines 1-%d (%d lines))\n", n, n)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, " L%07d | \tcase %d: return table[%d] + offset // entry\n", i, i, i%97)
	}
	return toolItem("read_file", map[string]any{"path": "tables.go"}, events.ToolOK, &events.ToolResult{Text: b.String()})
}

// longLine is an execute_command whose stdout is one line of size bytes.
func longLine(size int) *events.Item {
	text := "Command cat app.min.js exited with status 0.\n=== STDOUT (1 lines) ===\n" + strings.Repeat("function f(a){return a.b(c)||1};", size/32)
	return toolItem("execute_command", map[string]any{"command": "cat app.min.js"}, events.ToolOK, &events.ToolResult{Text: text})
}

// BenchmarkExpand is what pressing Enter on a huge tool costs the
// renderer: its height and the first screen (40 rows), from a cold cache
// (the line table of the 30 MB text is built once per item: "first") or
// with the table known (another width: "resize").
func BenchmarkExpand(b *testing.B) {
	for _, c := range []struct {
		name string
		it   *events.Item
	}{{"read-30MB", bigRead(30 << 20)}, {"line-2MB", longLine(2 << 20)}} {
		b.Run(c.name+"/first", func(b *testing.B) {
			for b.Loop() {
				r := newTestRenderer(styles.Dark)
				o := Options{Width: 120, Expanded: true}
				r.Lines(c.it, o, 0, 40)
				_ = r.Height(c.it, o)
			}
		})
		b.Run(c.name+"/resize", func(b *testing.B) {
			r := newTestRenderer(styles.Dark)
			r.Height(c.it, Options{Width: 120, Expanded: true})
			w := 0
			for b.Loop() {
				w++
				o := Options{Width: 80 + w%40, Expanded: true}
				r.Lines(c.it, o, 0, 40)
				_ = r.Height(c.it, o)
			}
		})
	}
}

// BenchmarkPage is a page of an expanded 30 MB output, scrolled to a new
// place each time: one screen laid out, nothing proportional to the text.
func BenchmarkPage(b *testing.B) {
	it := bigRead(30 << 20)
	r := newTestRenderer(styles.Dark)
	o := Options{Width: 120, Expanded: true}
	h := r.Height(it, o)
	at := 0
	for b.Loop() {
		at = (at + 7919*40) % (h - 40)
		r.Lines(it, o, at, at+40)
	}
}
