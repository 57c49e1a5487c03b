package events

import (
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestSettledWaitsForWhatCanStillChange: items count as settled only once
// a run ended after them and each is finished; a call still running, a
// turn still streaming and the notice of foreign frames hold back
// everything after them.
func TestSettledWaitsForWhatCanStillChange(t *testing.T) {
	call := ToolCall{ID: "c1", Name: "execute_command"}
	result := func(id string) Event {
		return Event{Kind: KindPostToolCall, ID: "p-" + id, Tool: &ToolEvent{Call: ToolCall{ID: id}, Result: &ToolResult{Text: "ok"}}}
	}
	tl := NewTimeline()
	steps := []struct {
		ev   Event
		want int
	}{
		{Event{Kind: KindPreConversation}, 0},
		{Event{Kind: KindUserMessage, ID: "u1", Text: "go"}, 0},
		{Event{Kind: KindAssistantMessage, ID: "a1", ToolCalls: []ToolCall{call}}, 0},
		{Event{Kind: KindPostConversation}, 3}, // the call ends unknown with the run
		{Event{Kind: KindPreConversation}, 3},
		{Event{Kind: KindUserMessage, ID: "u2", Text: "again"}, 3},
		{Event{Kind: KindTextDelta, ID: "a2", Text: "stream"}, 3},
		{Event{Kind: KindAssistantMessage, ID: "a3", ToolCalls: []ToolCall{{ID: "c2", Name: "read_file"}}}, 3},
		{Event{Kind: KindRunState, RunStatus: StatusIdle}, 4},              // a2 is still open
		{Event{Kind: KindAssistantMessage, ID: "a2", Text: "streamed"}, 7}, // its final form came
	}
	for i, s := range steps {
		tl.Apply(s.ev)
		if got := tl.Settled(); got != s.want {
			t.Fatalf("after step %d (%s): %d settled, want %d", i, s.ev.Kind, got, s.want)
		}
	}
	tl.Apply(Event{Kind: KindPreConversation})
	tl.Apply(Event{Kind: KindAssistantMessage, ID: "a4", ToolCalls: []ToolCall{{ID: "c3", Name: "read_file"}}})
	tl.Apply(Event{Kind: KindPostConversation})
	if got := tl.Settled(); got != 9 {
		t.Fatalf("after a third run: %d settled, want 9", got)
	}

	// Release forgets them: the rest moves up, a late result of a
	// released call comes as an item of its own, and a result of a
	// call not released finds its item.
	tl.Release(7)
	if tl.Len() != 2 || tl.Released() != 7 || tl.Items()[0].ID != "a4" {
		t.Fatalf("after Release(7): %d items, %d released, first %q", tl.Len(), tl.Released(), tl.Items()[0].ID)
	}
	tl.Apply(result("c3"))
	if tl.Len() != 2 || tl.Items()[1].Tool.Result == nil {
		t.Fatalf("the result of a kept call made a new item or was lost: %d items", tl.Len())
	}
	tl.Apply(result("c1"))
	if tl.Len() != 3 || tl.Items()[2].ID != "c1" {
		t.Fatalf("a late result of a released call: %d items", tl.Len())
	}
}

// TestForeignNoticeHoldsBack: the notice that counts foreign frames
// changes with each one, so nothing from it on settles.
func TestForeignNoticeHoldsBack(t *testing.T) {
	tl := NewTimeline()
	tl.Apply(Event{Kind: KindUserMessage, ID: "u1", Text: "go"})
	tl.Apply(Event{Kind: KindForeign, Notice: "x"})
	tl.Apply(Event{Kind: KindUserMessage, ID: "u2", Text: "more"})
	tl.Apply(Event{Kind: KindPostConversation})
	if got := tl.Settled(); got != 1 {
		t.Fatalf("%d settled, want 1 (the items before the notice)", got)
	}
	tl.Release(5)
	if tl.Released() != 1 || tl.Len() != 2 {
		t.Fatalf("Release beyond Settled: %d released, %d left", tl.Released(), tl.Len())
	}
}

// failingStore takes n texts, then fails.
type failingStore struct {
	memStore
	n int
}

func (f *failingStore) Put(s string) (int64, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return f.memStore.Put(s)
}

// TestFreezeOnAFailingStore: a store that fails while items are frozen
// stops the freezing with one notice; every item still reads whole, the
// frozen ones from their records and the others from memory.
func TestFreezeOnAFailingStore(t *testing.T) {
	for _, n := range []int{0, 1, 2, 5, 9} {
		tl := NewTimeline()
		tl.SetBodyStore(&failingStore{n: n}, SpillOptions{Min: 1})
		for i := range 4 {
			id := strconv.Itoa(i)
			call := ToolCall{ID: "c" + id, Name: "execute_command", Args: []byte(`{"command":"ls"}`)}
			tl.Apply(Event{Kind: KindUserMessage, ID: "u" + id, Text: "go " + id})
			tl.Apply(Event{Kind: KindAssistantMessage, ID: "a" + id, Text: "on it " + id, ToolCalls: []ToolCall{call}})
			tl.Apply(Event{Kind: KindPostToolCall, ID: "p" + id, Tool: &ToolEvent{Call: call, Result: &ToolResult{Text: "out " + id}}})
			tl.Apply(Event{Kind: KindPostConversation})
		}
		tl.Freeze(0)
		runtime.GC() // frozen items are held weakly: read their records
		notices := 0
		for i := range tl.Len() {
			it := tl.At(i)
			switch {
			case it.Kind == ItemNotice:
				notices++
			case it.Kind == ItemTool && !strings.HasPrefix(it.Tool.OutputText(), "out "):
				t.Errorf("store taking %d: item %d reads %q", n, i, it.Tool.OutputText())
			case it.Kind != ItemTool && !strings.Contains(it.Body(), " "):
				t.Errorf("store taking %d: item %d reads %q", n, i, it.Body())
			}
		}
		if tl.SpillErr() == nil || notices != 1 {
			t.Errorf("store taking %d: error %v, %d notices", n, tl.SpillErr(), notices)
		}
	}
}

// TestPeekReadsWhatAtReads: a frozen item read through Peek (a search's
// pass) is the item At reads, and an item a view holds from At is the one
// Peek gives too, so a search lands on what the screen shows.
func TestPeekReadsWhatAtReads(t *testing.T) {
	tl := NewTimeline()
	tl.SetBodyStore(&memStore{}, SpillOptions{Min: 1})
	for i := range 4 {
		id := strconv.Itoa(i)
		tl.Apply(Event{Kind: KindUserMessage, ID: "u" + id, Text: "go " + id})
		tl.Apply(Event{Kind: KindAssistantMessage, ID: "a" + id, Text: "on it " + id})
		tl.Apply(Event{Kind: KindPostConversation})
	}
	tl.Freeze(0)
	runtime.GC() // frozen items are held weakly: read their records
	if tl.Frozen() == 0 {
		t.Fatal("nothing was frozen")
	}
	held := tl.At(1)
	for i := range tl.Len() {
		p, a := tl.Peek(i), tl.At(i)
		if p.Kind != a.Kind || p.ID != a.ID || p.Body() != a.Body() {
			t.Errorf("item %d: Peek reads %v %q %q, At %v %q %q", i, p.Kind, p.ID, p.Body(), a.Kind, a.ID, a.Body())
		}
	}
	if tl.Peek(1) != held {
		t.Error("Peek of an item a view holds is another copy of it")
	}
}

// TestHeldTextsGoToTheStoreOverHold: with Hold, finished texts wait in
// memory; once they pass Hold the oldest go to the store, a text released
// while it waits never does, and every item reads its own text either way.
func TestHeldTextsGoToTheStoreOverHold(t *testing.T) {
	store := &memStore{}
	tl := NewTimeline()
	tl.SetBodyStore(store, SpillOptions{Min: 1, Hold: 100})
	out := func(i int) string { return strconv.Itoa(i) + strings.Repeat(" output", 5) } // 36 or 37 bytes
	run := func(from, to int) {
		for i := from; i < to; i++ {
			id := strconv.Itoa(i)
			call := ToolCall{ID: "c" + id, Name: "execute_command", Args: []byte(`{"command":"ls"}`)}
			tl.Apply(Event{Kind: KindPreToolCall, ID: "q" + id, Tool: &ToolEvent{Call: call}})
			tl.Apply(Event{Kind: KindPostToolCall, ID: "p" + id, Tool: &ToolEvent{Call: call, Result: &ToolResult{Text: out(i)}}})
		}
	}
	run(0, 2)
	if store.b.Len() != 0 {
		t.Fatalf("two outputs under Hold went to the store: %q", store.b.String())
	}
	run(2, 4) // four outputs: 146 bytes, the two oldest must go
	if got := store.b.String(); got != out(0)+out(1) {
		t.Fatalf("over Hold the store holds %q, want the two oldest outputs", got)
	}
	tl.Apply(Event{Kind: KindPostConversation})
	items := tl.Items()
	for i, it := range items {
		if got := it.Tool.OutputText(); got != out(i) {
			t.Errorf("item %d reads %q, want %q", i, got, out(i))
		}
	}
	if !items[0].Tool.OutputStored() || items[3].Tool.OutputStored() {
		t.Errorf("stored: first %v, last %v; want the first only", items[0].Tool.OutputStored(), items[3].Tool.OutputStored())
	}
	tl.Release(tl.Settled()) // an export wrote them: the held ones never go
	run(4, 6)
	if got := store.b.String(); got != out(0)+out(1) {
		t.Errorf("released texts went to the store after all: %q", got)
	}
	run(6, 8)
	if got := store.b.String(); got != out(0)+out(1)+out(4)+out(5) {
		t.Errorf("after the release the store holds %q, want the oldest texts held since", got)
	}
}
