package tui

import (
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
)

// Cancelling, leaving and coming back to the same task before the cancel
// answer arrives: the returned queue lands in the task's held messages,
// and the composer keeps what was typed.
func TestCancelResultAfterReattachToSameTask(t *testing.T) {
	hs := attached(t, 80, 24)
	id := hs.m.task.ID
	hs.m.tl.Apply(runStart("r1", fixedNow))
	hs.b.cancelPending = []events.QueuedMessage{{Text: "queued one"}}
	cmd := hs.m.cancelRun()
	// Leave and come back before the answer.
	hs.m.detach()
	hs.run(hs.m.attach(events.Task{ID: id}))
	hs.run(cmd)
	hs.typ(" and more")
	hs.key("esc")
	hs.key("esc")
	hs.run(hs.m.attach(events.Task{ID: id}))
	if got := heldTexts(hs); len(got) != 1 || got[0] != "queued one" {
		t.Fatalf("queued text lost: held %q, composer %q, drafts %q", got, hs.m.comp.value(), hs.m.drafts)
	}
	if !strings.Contains(hs.m.comp.value(), "and more") {
		t.Fatalf("typed text lost: composer %q", hs.m.comp.value())
	}
}
