package tui

import (
	"testing"

	"github.com/perch-tui/perch/events"
)

// While the UI is behind its stream (a long replay, every batch cut by
// its size), each frame draws a tail that is gone by the next: those
// drawings are not kept, so memory does not grow with the replay. Once
// the UI has caught up, what it draws is kept again for paging back.
func TestCatchingUpKeepsLittleDrawn(t *testing.T) {
	hs := newHarness(t, 120, 40, Config{TaskID: "task-1"})
	evs := decodeAll(wireFrames(12_000))
	drawn := func() int { return hs.m.rend.(richRenderer).r.Stats().Bytes }
	feed := func(evs []events.Event, behind bool) {
		for i := 0; i < len(evs); i += 50 {
			hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, Events: chunksOf(evs[i:min(i+50, len(evs))]), Behind: behind})
			hs.m.View()
		}
	}
	// Behind for the first half: what is kept drawn does not grow with
	// the replay (a second quarter keeps about what the first did).
	quarter := len(evs) / 4
	feed(evs[:quarter], true)
	first := drawn()
	feed(evs[quarter:2*quarter], true)
	second := drawn()
	if first == 0 || second > first+first/2 {
		t.Fatalf("catching up with a replay kept %d KB drawn after a quarter of it, %d KB after half: it grows with the replay", first>>10, second>>10)
	}
	feed(evs[2*quarter:], false)
	if got := drawn(); got <= second {
		t.Fatalf("after catching up, %d KB drawn are kept: no more than while catching up (%d KB)", got>>10, second>>10)
	}
}
