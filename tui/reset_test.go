package tui

import (
	"testing"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// TestResetEventStartsTheTimelineOver: a reset in a batch drops what came
// before it (the task stays), and the events after it build the timeline
// again, whether they come in the same batch or later.
func TestResetEventStartsTheTimelineOver(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.events(user("u1", "the first question"), assistant("a1", "an answer seen twice"))
	hs.contains("an answer seen twice")
	before := hs.m.tl.Len()

	// Same batch: history again after the reset, nothing duplicated.
	hs.events(resetEvent(), user("u1", "the first question"), assistant("a1", "an answer seen twice"))
	if got := hs.m.tl.Len(); got != before {
		t.Fatalf("timeline has %d items after the reset and the same history, want %d", got, before)
	}
	if hs.m.task.ID != "task-1" {
		t.Fatalf("the task must stay across a reset, got %q", hs.m.task.ID)
	}

	// Reset alone, then a different history in the next batch.
	hs.events(assistant("a2", "filler"), resetEvent())
	if got := hs.m.tl.Len(); got != 0 {
		t.Fatalf("timeline has %d items right after a reset, want 0", got)
	}
	hs.lacks("an answer seen twice")
	hs.lacks("filler")
	hs.events(user("u9", "a fresh start"))
	hs.contains("a fresh start")
	checkFrame(t, hs.m)
}

// TestResetEventIsNotAnyNotice: only the marker resets; an ordinary
// notice (what a decoder makes of a server's odd frame) is applied.
func TestResetEventIsNotAnyNotice(t *testing.T) {
	ev := resetEvent()
	if !isResetEvent(&ev) {
		t.Fatal("resetEvent is not recognised")
	}
	for _, other := range []events.Event{
		{Kind: events.KindNotice, Variant: resetVariant, Text: "a server's notice named like the marker"},
		{Kind: events.KindUnknown, Variant: resetVariant},
		{Kind: events.KindNotice, NoticeKind: resetNotice},
	} {
		if isResetEvent(&other) {
			t.Fatalf("%+v taken for a reset", other)
		}
	}
	hs := attached(t, 80, 24)
	hs.events(user("u1", "still here"), events.Event{Kind: events.KindUnknown, Variant: resetVariant})
	hs.contains("still here")
}

// TestBackendNameInStatusBars: a backend that names itself shows its name
// in the task list's and the task's status bar.
func TestBackendNameInStatusBars(t *testing.T) {
	hs := newHarnessOn(t, 100, 24, Config{}, &fakeBackend{name: client.Suna, caps: &client.Capabilities{Create: true, Send: true, Cancel: true}})
	hs.contains("suna")
	hs2 := attachedOn(t, 100, 24, nil, &fakeBackend{name: client.Pynchy, caps: &client.Capabilities{Send: true, PipesFollowUps: true}})
	hs2.contains("pynchy")
}

// TestNoCancelOffered: on a backend without Cancel (pynchy), a busy task
// offers no cancel key (hints, queue panel, help), ctrl+x asks nothing,
// and ctrl+c on an empty composer quits instead of asking.
func TestNoCancelOffered(t *testing.T) {
	hs := attachedOn(t, 140, 30, nil, &fakeBackend{name: client.Pynchy, caps: &client.Capabilities{Send: true, PipesFollowUps: true}})
	hs.events(user("u1", "go"), runStart("r1", fixedNow))
	hs.events(events.Event{Kind: events.KindMessageQueued, MessageID: "q1", Text: "piped follow-up"})
	if !hs.m.busy() {
		t.Fatal("the task should be busy")
	}
	hs.contains("piped follow-up")
	hs.lacks("cancel run")
	hs.lacks("ctrl+x")
	hs.send(keyMsg("ctrl+x"))
	if hs.m.overlay == ovConfirmCancel {
		t.Fatal("ctrl+x asks to cancel on a backend that cannot")
	}
	hs.send(keyMsg("f1"))
	hs.lacks("cancel run")
	hs.send(keyMsg("esc"))
	hs.send(keyMsg("ctrl+c"))
	if hs.m.overlay == ovConfirmCancel || !hs.m.quitting {
		t.Fatalf("ctrl+c on a busy task without cancel: overlay %v, quitting %v", hs.m.overlay, hs.m.quitting)
	}
}

// TestNoWebSearchOffered: on a backend whose messages cannot ask for web
// search (Suna, pynchy), the composer shows no web badge, the hints and
// the help no ctrl+s, and ctrl+s changes nothing; maria offers all three.
func TestNoWebSearchOffered(t *testing.T) {
	attached(t, 140, 30).contains("web off")
	hs := attachedOn(t, 140, 30, nil, &fakeBackend{name: client.Suna, caps: &client.Capabilities{Create: true, Send: true, Cancel: true}})
	hs.events(user("u1", "hello"))
	hs.lacks("web off")
	hs.lacks("ctrl+s")
	hs.send(keyMsg("ctrl+s"))
	if hs.m.comp.web {
		t.Fatal("ctrl+s turned web search on for a backend without it")
	}
	hs.lacks("web on")
	hs.send(keyMsg("f1"))
	hs.lacks("web search")
}
