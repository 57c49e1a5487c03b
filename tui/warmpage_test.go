package tui

import (
	"testing"
	"time"
)

// TestNeighbourPagesAreLaidOutAhead: once the messages after a move have
// run, a PageUp or PageDown (the key and its frame, before any message
// that follows) lays out no item for the first time: the warm messages
// did, between the keys.
func TestNeighbourPagesAreLaidOutAhead(t *testing.T) {
	hs := newHarness(t, 120, 40, Config{TaskID: "task-1"})
	cr := countItems(hs)
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, Events: chunksOf(decodeAll(wireFrames(2_000)))})
	hs.m.View()
	if !hs.m.streaming() {
		t.Fatal("just after a batch, the followed stream should count as delivering")
	}
	hs.now = hs.now.Add(time.Second) // the stream has been quiet since
	hs.key("esc")                    // the transcript (and the warm messages the quiet allows)
	for i, k := range []string{"pgup", "pgup", "pgup", "pgdown", "pgup", "pgup"} {
		before := len(cr.items)
		_, cmd := hs.m.Update(keyMsg(k))
		hs.m.View()
		if fresh := len(cr.items) - before; fresh > 0 {
			t.Fatalf("key %d (%s) laid out %d items for the first time: the page was not laid out ahead", i+1, k, fresh)
		}
		hs.run(cmd) // the warm messages, as the program runs them between keys
		hs.m.View()
	}
	if len(cr.items) < 20 {
		t.Fatalf("only %d items laid out: did the pages move?", len(cr.items))
	}
}
