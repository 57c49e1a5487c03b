package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/events"
)

// A run that ends is one notification, once how it ended is in: not "a
// reply" when the list says idle and then "the run failed" when the
// summary says so.
func TestBoardRingsOncePerRunEnd(t *testing.T) {
	fb := threeSources()
	fb.m.SetSummarized("work")
	hs, _ := boardHarness(t, 120, 30, fb)
	rawOut(hs)
	fb.m.SetSessions("work", []board.Session{
		{ID: "thread-7f3a", Name: "release notes", Status: board.Idle, Updated: fixedNow.Add(-2 * time.Minute)},
		{ID: "thread-91bc", Name: "triage", Status: board.Generating, Updated: fixedNow},
	}, fixedNow)
	hs.send(boardUpdatedMsg{})
	fb.m.SetSessions("work", []board.Session{
		{ID: "thread-7f3a", Name: "release notes", Status: board.Idle, Updated: fixedNow.Add(-2 * time.Minute)},
		{ID: "thread-91bc", Name: "triage", Status: board.Idle, Updated: fixedNow},
	}, fixedNow)
	hs.send(boardUpdatedMsg{})
	if out := rawOut(hs); out != "" {
		t.Fatalf("rang before the run's end was read: %q", out)
	}
	fb.m.SetSummary("work", "thread-91bc", events.RunSummary{End: events.RunEndFailed, Reason: "rate limit exceeded"}, fixedNow)
	hs.send(boardUpdatedMsg{})
	out := rawOut(hs)
	if strings.Count(out, "\x1b]9;") != 1 || !strings.Contains(out, "the run failed") {
		t.Fatalf("notifications %q, want one: the run failed", out)
	}
	hs.send(boardUpdatedMsg{})
	if out := rawOut(hs); out != "" {
		t.Fatalf("rang again: %q", out)
	}
}
