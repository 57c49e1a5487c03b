package tui

import (
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
)

// Cancelling, leaving and coming back to the same task before the cancel
// answer arrives: the returned queue must land in the composer, not in a
// draft that the next saveDraft overwrites.
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
	if !strings.Contains(hs.m.comp.value(), "queued one") {
		t.Fatalf("queued text lost: composer %q, drafts %q", hs.m.comp.value(), hs.m.drafts)
	}
}
