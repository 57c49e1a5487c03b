package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/events"
)

// Benchmarks report each UI cost next to a baseline measured in the same
// run, so results read as ratios rather than machine-dependent times:
//
//   - BenchmarkLoad: decode+apply of a 10,000-event session (baseline)
//     versus decode+apply+first frame.
//   - BenchmarkKeypress: scrolling and typing with 100 vs 10,000 items (the
//     ratio shows per-key cost is independent of session length).
//   - BenchmarkResize: a resize with 10 vs 1,000 items, cold render cache
//     (only visible items are re-rendered), next to decode+apply of 1,000.

// wireFrames builds n maria frames in the HEAD dialect: user turns, replies
// with tool calls, and Pre/PostToolCall pairs with multi-line output.
func wireFrames(n int) []events.Frame {
	type m = map[string]any
	frames := make([]events.Frame, 0, n)
	add := func(i int, desc m) {
		env := m{"id": fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "created": 1774598395000 + int64(i)*1000, "desc": desc}
		data, _ := json.Marshal(env)
		frames = append(frames, events.Frame{Name: "maria", Data: data})
	}
	for i := 0; len(frames) < n; i++ {
		call := fmt.Sprintf("toolu_%06d", i/4)
		tc := m{"id": call, "type": "function", "function": m{"name": "execute_command", "arguments": `{"command":"go test ./..."}`}}
		switch i % 4 {
		case 0:
			add(i, m{"msg": "UserMessage", "content": fmt.Sprintf("question %d: why does the parser fail on input %d?", i, i)})
		case 1:
			add(i, m{"msg": "AssistantMessage", "content": fmt.Sprintf("Reply %d. The parser **fails** because the tokenizer drops the last byte.\n\n- first\n- second with `code`", i),
				"tool_calls": []any{tc}, "usage": m{"prompt_tokens": 9000 + i, "completion_tokens": 60, "total_tokens": 9060 + i}})
		case 2:
			add(i, m{"msg": "PreToolCall", "tool_call": tc, "name": "execute_command", "args": m{"command": "go test ./..."}})
		case 3:
			out := strings.Repeat(fmt.Sprintf("ok  \tpkg/%d\t0.01s\n", i), 12)
			add(i, m{"msg": "PostToolCall", "tool_call": tc, "name": "execute_command", "result": out, "text": out})
		}
	}
	return frames
}

func decodeAll(frames []events.Frame) []events.Event {
	evs := make([]events.Event, len(frames))
	for i, f := range frames {
		evs[i] = maria.Decode(f)
	}
	return evs
}

// loaded returns a model attached to a task with n events applied and one
// frame drawn.
func loaded(b testing.TB, n, w, h int) *harness {
	hs := newHarness(b, w, h, Config{TaskID: "task-1"})
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, Events: chunksOf(decodeAll(wireFrames(n)))})
	hs.m.View()
	return hs
}

func BenchmarkLoad(b *testing.B) {
	const n = 10_000
	frames := wireFrames(n)
	b.Run("baseline-decode+apply-10k", func(b *testing.B) {
		for b.Loop() {
			tl := events.NewTimeline()
			for _, f := range frames {
				tl.Apply(maria.Decode(f))
			}
		}
	})
	b.Run("decode+apply+first-frame-10k", func(b *testing.B) {
		for b.Loop() {
			hs := newHarness(b, 120, 40, Config{TaskID: "task-1"})
			hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, Events: chunksOf(decodeAll(frames))})
			_ = hs.m.View()
		}
	})
}

func BenchmarkKeypress(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		// Alternating keys in the transcript: a line at a time, then a
		// page at a time.
		for _, keys := range []struct{ name, up, down string }{{"scroll", "k", "j"}, {"page", "pgup", "pgdown"}} {
			b.Run(fmt.Sprintf("%s/items=%d", keys.name, n), func(b *testing.B) {
				hs := loaded(b, n, 120, 40)
				hs.key("esc") // transcript focus
				hs.key("pgup")
				hs.key("pgup")
				alternateKeys(b, hs, keyMsg(keys.up), keyMsg(keys.down))
			})
		}
		b.Run(fmt.Sprintf("type/items=%d", n), func(b *testing.B) {
			hs := loaded(b, n, 120, 40)
			alternateKeys(b, hs, keyMsg("x"), keyMsg("backspace"))
		})
		// Typing a draft, as the end-to-end bench does: letter after
		// letter, a new draft every 100.
		b.Run(fmt.Sprintf("draft/items=%d", n), func(b *testing.B) {
			hs := loaded(b, n, 120, 40)
			for i := 0; b.Loop(); i++ {
				if i%100 == 0 {
					b.StopTimer()
					hs.m.comp.reset()
					_ = hs.m.View()
					b.StartTimer()
				}
				hs.m.Update(keyMsg(string(rune('a' + i%26))))
				_ = hs.m.View()
			}
		})
	}
}

// alternateKeys presses a and b in turn, each followed by a frame, for
// as long as the benchmark loops.
func alternateKeys(b *testing.B, hs *harness, a, c tea.KeyPressMsg) {
	for i := 0; b.Loop(); i++ {
		k := a
		if i%2 == 1 {
			k = c
		}
		hs.m.Update(k)
		_ = hs.m.View()
	}
}

func BenchmarkResize(b *testing.B) {
	frames := wireFrames(1000)
	b.Run("baseline-decode+apply-1k", func(b *testing.B) {
		for b.Loop() {
			tl := events.NewTimeline()
			for _, f := range frames {
				tl.Apply(maria.Decode(f))
			}
		}
	})
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("resize-cold/items=%d", n), func(b *testing.B) {
			hs := loaded(b, n, 120, 40)
			rr := hs.m.rend.(richRenderer)
			i := 0
			for b.Loop() {
				rr.r.Invalidate() // every visible item re-renders: the worst case
				hs.m.Update(tea.WindowSizeMsg{Width: 100 + i%40, Height: 40})
				i++
				_ = hs.m.View()
			}
		})
	}
}

// countingRenderer counts item renders, to prove the transcript is lazy.
type countingRenderer struct {
	itemRenderer
	items map[*events.Item]int
	rows  int // lines asked of Lines
}

// countItems puts a countingRenderer in front of hs's renderer.
func countItems(hs *harness) *countingRenderer {
	cr := &countingRenderer{itemRenderer: hs.m.rend, items: map[*events.Item]int{}}
	hs.m.rend = cr
	return cr
}

func (c *countingRenderer) Item(it *events.Item, o itemOpts) []string {
	c.items[it]++
	return c.itemRenderer.Item(it, o)
}

func (c *countingRenderer) Height(it *events.Item, o itemOpts) int {
	c.items[it]++
	return c.itemRenderer.Height(it, o)
}

func (c *countingRenderer) Lines(it *events.Item, o itemOpts, from, to int) []string {
	c.items[it]++
	c.rows += max(min(to, c.itemRenderer.Height(it, o))-max(from, 0), 0)
	return c.itemRenderer.Lines(it, o, from, to)
}

func TestLazyTranscript(t *testing.T) {
	hs := newHarness(t, 120, 40, Config{TaskID: "task-1"})
	cr := countItems(hs)
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, Events: chunksOf(decodeAll(wireFrames(10_000)))})
	hs.m.View()
	if n := hs.m.tl.Len(); n < 7000 {
		t.Fatalf("only %d items: decoder or timeline changed?", n)
	}
	if len(cr.items) > 40 {
		t.Fatalf("first frame of a 10k session laid out %d items; want only the visible ones", len(cr.items))
	}
	// A page of scrolling, a resize and a jump to the top stay bounded too.
	cr.items = map[*events.Item]int{}
	hs.key("esc")
	hs.key("pgup")
	hs.send(tea.WindowSizeMsg{Width: 90, Height: 30})
	hs.m.View()
	hs.key("g")
	hs.m.View()
	if len(cr.items) > 120 {
		t.Fatalf("scroll+resize+top laid out %d items", len(cr.items))
	}
	// Search scans text but lays out only the landing item's surroundings.
	cr.items = map[*events.Item]int{}
	hs.key("/")
	hs.typ("question 9000")
	hs.key("enter")
	hs.m.View()
	if len(cr.items) > 60 {
		t.Fatalf("search laid out %d items", len(cr.items))
	}
}

// BenchmarkFrame is what drawing costs the transcript when a frame comes:
// the visible rows of a scrolled 100- or 10,000-item session (cached
// items), and the same with a search highlighting every visible row.
func BenchmarkFrame(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		for _, q := range []string{"", "ok"} {
			name := fmt.Sprintf("transcript/items=%d", n)
			if q != "" {
				name += "/search"
			}
			b.Run(name, func(b *testing.B) {
				hs := loaded(b, n, 120, 40)
				hs.key("esc")
				hs.key("pgup")
				hs.m.search.query = q
				h := hs.m.transcriptHeight()
				b.ReportAllocs()
				for b.Loop() {
					_ = hs.m.transcriptLines(h)
				}
			})
		}
	}
}
