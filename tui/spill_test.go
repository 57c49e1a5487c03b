package tui

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/spill"
	export "github.com/perch-tui/perch/transcript"
)

// spillHarness is a harness attached to task-1 whose timeline keeps texts
// of min bytes or more in a spill file under dir.
func spillHarness(t *testing.T, w, h int, dir string, min int) *harness {
	t.Helper()
	hs := newHarness(t, w, h, Config{TaskID: "task-1", Spill: func(id string) *spill.File { return spill.OpenIn(dir, id) }})
	t.Cleanup(hs.m.spill.close)
	hs.m.spill.min = min
	hs.m.restartTimeline() // the attach made its timeline before min was set
	return hs
}

// TestSpilledSessionLooksTheSame: a session whose every text (replies,
// reasoning, tool outputs, user messages) waits in a spill file shows the
// same screens as one held in memory, through selecting, expanding,
// paging, searching and copying, and exports the same bytes.
func TestSpilledSessionLooksTheSame(t *testing.T) {
	reply := "## Findings\n\nThe tokenizer **drops** the last byte:\n\n```go\nfor i := 0; i < len(s)-1; i++ {\n\temit(s[i])\n}\n```\n\n" + strings.Repeat("More detail on the fix. ", 80)
	think := events.Event{Kind: events.KindAssistantMessage, ID: "a9", Text: reply, Thinking: strings.Repeat("Let me think about the loop bound. ", 60), Created: fixedNow}
	evs := append(session(60), think)
	mem := newHarness(t, 100, 30, Config{TaskID: "task-1"})
	sp := spillHarness(t, 100, 30, t.TempDir(), 1)
	for _, hs := range []*harness{mem, sp} {
		hs.events(evs...)
	}
	same := func(step string) {
		t.Helper()
		if a, b := mem.view(), sp.view(); a != b {
			t.Fatalf("%s: the spilled session shows\n%s\nwhere the one in memory shows\n%s", step, b, a)
		}
	}
	same("final reply")
	for _, k := range []string{"esc", "[", "[", "enter", "pgup", "pgup", "enter", "[", "[", "enter"} {
		mem.key(k)
		sp.key(k)
		same("key " + k)
	}
	for _, hs := range []*harness{mem, sp} {
		hs.key("/")
		hs.typ("question 8:")
		hs.key("enter")
	}
	same("search")
	for _, f := range []func(*bytes.Buffer, *events.Timeline) error{
		func(b *bytes.Buffer, tl *events.Timeline) error { return export.WriteJSONL(b, tl) },
		func(b *bytes.Buffer, tl *events.Timeline) error { return export.WriteMarkdownFull(b, tl, "t") },
	} {
		var a, b bytes.Buffer
		if err := f(&a, mem.m.tl.(*events.Timeline)); err != nil {
			t.Fatal(err)
		}
		if err := f(&b, sp.m.tl.(*events.Timeline)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("the spilled session exports\n%s\nwhere the one in memory exports\n%s", b.Bytes(), a.Bytes())
		}
	}
}

// TestBigOutputStaysOffTheHeap: a 30 MB tool output goes to the spill
// file, not the heap, and still expands, pages and searches as it does in
// memory.
func TestBigOutputStaysOffTheHeap(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory blurs the heap's size")
	}
	sp := spillHarness(t, 100, 30, t.TempDir(), 0)
	mem := newHarness(t, 100, 30, Config{TaskID: "task-1"})
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapInuse
	feed := func(hs *harness) string {
		evs, marker := bigOutputSession(30 << 20)
		for _, batch := range evs {
			hs.events(batch...)
		}
		return marker
	}
	marker := feed(sp)
	if err := sp.m.spill.f.Flush(); err != nil { // written, not waiting in a buffer
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grown := int64(ms.HeapInuse) - int64(before); grown > 8<<20 {
		t.Errorf("the heap grew by %.1f MB with a 30 MB output that should be in the spill file", float64(grown)/(1<<20))
	}
	feed(mem)
	for _, k := range []string{"esc", "[", "[", "enter", "pgdown", "pgdown"} {
		mem.key(k)
		sp.key(k)
		if a, b := mem.view(), sp.view(); a != b {
			t.Fatalf("key %s: spilled\n%s\nin memory\n%s", k, b, a)
		}
	}
	for _, hs := range []*harness{mem, sp} {
		hs.key("/")
		hs.typ("zebra")
		hs.key("enter")
	}
	if a, b := mem.view(), sp.view(); a != b || !strings.Contains(b, marker) {
		t.Fatalf("search: spilled\n%s\nin memory\n%s", b, a)
	}
}

// TestSpillFileTruncatedUnderPerch: texts whose spill file was truncated
// show a notice that says so, and nothing breaks.
func TestSpillFileTruncatedUnderPerch(t *testing.T) {
	sp := spillHarness(t, 100, 30, t.TempDir(), 1)
	sp.events(session(8)...)
	path := sp.m.spill.f.Path()
	if err := sp.m.spill.f.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	sp.send(tea.WindowSizeMsg{Width: 90, Height: 30}) // what was drawn is drawn again
	sp.contains("output no longer available")
	for _, k := range []string{"esc", "[", "enter", "pgup", "g"} {
		sp.key(k)
	}
	checkFrame(t, sp.m)
}

// TestSpillDirNotWritable: without a spill file the texts stay in memory,
// one notice says so, and the session shows whole.
func TestSpillDirNotWritable(t *testing.T) {
	file := t.TempDir() + "/file"
	os.WriteFile(file, nil, 0o600)
	sp := spillHarness(t, 100, 30, file+"/spill", 1)
	sp.events(session(8)...)
	n := 0
	for _, it := range sp.m.tl.Items() {
		if it.Kind == events.ItemNotice && strings.Contains(it.Text, "kept in memory") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d notices of the missing spill file, want 1", n)
	}
	sp.key("esc")
	sp.key("g")
	sp.contains("kept in memory")
	sp.contains("question 0")
}

// TestFrozenSessionLooksTheSame: a session whose settled items are all
// frozen to the spill file (read back from their records when shown)
// shows the same screens as one held in memory, through selecting,
// expanding, paging, searching, copying and a Pruned mark on a frozen
// call, and exports the same bytes.
func TestFrozenSessionLooksTheSame(t *testing.T) {
	var evs []events.Event
	for i, ev := range session(80) {
		evs = append(evs, ev)
		if i%8 == 7 {
			evs = append(evs, events.Event{Kind: events.KindPostConversation})
		}
	}
	evs = append(evs, events.Event{Kind: events.KindPruned, PrunedID: "e3"})
	mem := newHarness(t, 100, 30, Config{TaskID: "task-1"})
	cold := spillHarness(t, 100, 30, t.TempDir(), 1)
	cold.m.hotItems = 0
	for _, hs := range []*harness{mem, cold} {
		hs.events(evs...)
	}
	if n := cold.m.tl.(*events.Timeline).Frozen(); n < 40 {
		t.Fatalf("only %d items frozen", n)
	}
	same := func(step string) {
		t.Helper()
		runtime.GC() // items read back are held weakly: read the records again
		if a, b := mem.view(), cold.view(); a != b {
			t.Fatalf("%s: the frozen session shows\n%s\nwhere the one in memory shows\n%s", step, b, a)
		}
	}
	same("final reply")
	for _, k := range []string{"esc", "[", "[", "enter", "pgup", "pgup", "pgup", "enter", "[", "[", "enter", "g", "e", "enter"} {
		mem.key(k)
		cold.key(k)
		same("key " + k)
	}
	for _, hs := range []*harness{mem, cold} {
		hs.key("/")
		hs.typ("question 8:")
		hs.key("enter")
	}
	same("search")
	var a, b bytes.Buffer
	if err := export.WriteJSONL(&a, mem.m.tl.(*events.Timeline)); err != nil {
		t.Fatal(err)
	}
	if err := export.WriteJSONL(&b, cold.m.tl.(*events.Timeline)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("the frozen session exports\n%s\nwhere the one in memory exports\n%s", b.Bytes(), a.Bytes())
	}
}
