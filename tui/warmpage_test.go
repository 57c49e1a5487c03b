package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// TestNeighbourPagesAreLaidOutAhead: once the messages after a move have
// run, a PageUp or PageDown (the key and its frame, before any message
// that follows) lays out no item for the first time: the warm messages
// did, between the keys. They come warmAfterMove after the key, not with
// its own commands: the key's frame is drawn meanwhile.
func TestNeighbourPagesAreLaidOutAhead(t *testing.T) {
	hs := newHarness(t, 120, 40, Config{TaskID: "task-1"})
	// Timers fire when the test says so; the model sees one pending.
	type timer struct {
		d   time.Duration
		msg tea.Msg
	}
	var due []timer
	hs.m.after = func(d time.Duration, msg tea.Msg) tea.Cmd {
		due = append(due, timer{d, msg})
		return func() tea.Msg { return nil }
	}
	fire := func() {
		for len(due) > 0 {
			tm := due[0]
			due = due[1:]
			if _, ok := tm.msg.(warmMsg); ok && tm.d != warmAfterMove && tm.d != warmQuiet {
				t.Fatalf("neighbour layout asked for after %v", tm.d)
			}
			hs.send(tm.msg)
		}
	}
	cr := countItems(hs)
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, Events: chunksOf(decodeAll(wireFrames(2_000)))})
	hs.m.View()
	if !hs.m.streaming() {
		t.Fatal("just after a batch, the followed stream should count as delivering")
	}
	hs.now = hs.now.Add(time.Second) // the stream has been quiet since
	fire()
	hs.key("esc") // the transcript
	fire()
	for i, k := range []string{"pgup", "pgup", "pgup", "pgdown", "pgup", "pgup"} {
		before := len(cr.items)
		_, cmd := hs.m.Update(keyMsg(k))
		hs.m.View()
		if fresh := len(cr.items) - before; fresh > 0 {
			t.Fatalf("key %d (%s) laid out %d items for the first time: the page was not laid out ahead", i+1, k, fresh)
		}
		hs.run(cmd) // the key's own commands: no layout beside its frame
		if fresh := len(cr.items) - before; fresh > 0 {
			t.Fatalf("key %d (%s): %d items laid out by the key's own commands, beside its frame", i+1, k, fresh)
		}
		asked := false
		for _, tm := range due {
			if _, ok := tm.msg.(warmMsg); ok && tm.d == warmAfterMove {
				asked = true
			}
		}
		if !asked {
			t.Fatalf("key %d (%s) asked for no neighbour layout warmAfterMove later (timers: %v)", i+1, k, due)
		}
		fire() // warmAfterMove later, as the program runs them between keys
		hs.m.View()
	}
	if len(cr.items) < 20 {
		t.Fatalf("only %d items laid out: did the pages move?", len(cr.items))
	}
}
