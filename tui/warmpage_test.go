package tui

import (
	"testing"
	"time"

	"github.com/perch-tui/perch/events"
)

// firstSeenRenderer counts the items laid out for the first time while
// counting is on.
type firstSeenRenderer struct {
	itemRenderer
	seen     map[*events.Item]bool
	counting bool
	fresh    int
}

func (r *firstSeenRenderer) note(it *events.Item) {
	if !r.seen[it] {
		r.seen[it] = true
		if r.counting {
			r.fresh++
		}
	}
}

func (r *firstSeenRenderer) Item(it *events.Item, o itemOpts) []string {
	r.note(it)
	return r.itemRenderer.Item(it, o)
}

func (r *firstSeenRenderer) Height(it *events.Item, o itemOpts) int {
	r.note(it)
	return r.itemRenderer.Height(it, o)
}

func (r *firstSeenRenderer) Lines(it *events.Item, o itemOpts, from, to int) []string {
	r.note(it)
	return r.itemRenderer.Lines(it, o, from, to)
}

// TestNeighbourPagesAreLaidOutAhead: once the messages after a move have
// run, a PageUp or PageDown (the key and its frame, before any message
// that follows) lays out no item for the first time: the warm messages
// did, between the keys.
func TestNeighbourPagesAreLaidOutAhead(t *testing.T) {
	hs := newHarness(t, 120, 40, Config{TaskID: "task-1"})
	r := &firstSeenRenderer{itemRenderer: hs.m.rend, seen: map[*events.Item]bool{}}
	hs.m.rend = r
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, Events: chunksOf(decodeAll(wireFrames(2_000)))})
	hs.m.View()
	if !hs.m.streaming() {
		t.Fatal("just after a batch, the followed stream should count as delivering")
	}
	hs.now = hs.now.Add(time.Second) // the stream has been quiet since
	hs.key("esc")                    // the transcript (and the warm messages the quiet allows)
	for i, k := range []string{"pgup", "pgup", "pgup", "pgdown", "pgup", "pgup"} {
		r.counting, r.fresh = true, 0
		_, cmd := hs.m.Update(keyMsg(k))
		hs.m.View()
		r.counting = false
		if r.fresh > 0 {
			t.Fatalf("key %d (%s) laid out %d items for the first time: the page was not laid out ahead", i+1, k, r.fresh)
		}
		hs.run(cmd) // the warm messages, as the program runs them between keys
		hs.m.View()
	}
	if len(r.seen) < 20 {
		t.Fatalf("only %d items laid out: did the pages move?", len(r.seen))
	}
}
