package render

import (
	"fmt"
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
