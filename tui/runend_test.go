package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
)

// After a failed or cancelled run the status bar says so, with the
// board's word and mark, until the next run; a run that finished is idle.
func TestStatusBarSaysHowTheLastRunEnded(t *testing.T) {
	failed := events.Event{Kind: events.KindFailed, ID: "f1", Text: "provider error", Created: fixedNow}
	cancelled := events.Event{Kind: events.KindCancelled, ID: "c1", Created: fixedNow}
	tests := []struct {
		name  string
		evs   []events.Event
		want  string
		lacks string
	}{
		{"failed", []events.Event{user("u1", "go"), runStart("r1", fixedNow), failed, runEnd("p1")}, "✗ failed", "✓ idle"},
		{"cancelled", []events.Event{user("u1", "go"), runStart("r1", fixedNow), cancelled, runEnd("p1")}, "⊘ cancelled", "✓ idle"},
		{"finished", []events.Event{user("u1", "go"), runStart("r1", fixedNow), assistant("a1", "done"), runEnd("p1")}, "✓ idle", "failed"},
		{"a new run after a failure", []events.Event{user("u1", "go"), runStart("r1", fixedNow), failed, runEnd("p1"),
			user("u2", "again"), runStart("r2", fixedNow), assistant("a2", "done"), runEnd("p2")}, "✓ idle", "✗ failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hs := newHarness(t, 120, 30, Config{TaskID: "task-1"})
			hs.events(tc.evs...)
			line := ansi.Strip(hs.m.statusLine())
			if !strings.Contains(line, tc.want) || strings.Contains(line, tc.lacks) {
				t.Errorf("status bar %q: want %q, not %q", line, tc.want, tc.lacks)
			}
		})
	}
}

// A local CLI's session that waits for the user says so in the status
// bar, with its reason, as the board does; where the source cannot tell
// working from waiting, the bar says the union the source gives.
func TestStatusBarSaysWaiting(t *testing.T) {
	hs := newHarness(t, 120, 30, Config{TaskID: "task-1"})
	hs.events(user("u1", "go"), runStart("r1", fixedNow))
	task := events.Task{ID: "task-1", Status: events.StatusGenerating}
	hs.taskList(task)
	task.Status, task.WaitingFor = events.StatusWaiting, "permission prompt"
	hs.taskList(task)
	if line := ansi.Strip(hs.m.statusLine()); !strings.Contains(line, "waiting: permission prompt") || strings.Contains(line, "generating") {
		t.Errorf("waiting on a permission prompt: status bar %q", line)
	}
	task.Status, task.WaitingFor, task.Detail = events.StatusGenerating, "", "working or waiting for approval"
	hs.taskList(task)
	if line := ansi.Strip(hs.m.statusLine()); !strings.Contains(line, "working or waiting for approval") {
		t.Errorf("the honest union: status bar %q", line)
	}
}
