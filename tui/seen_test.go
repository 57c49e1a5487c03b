package tui

import (
	"testing"
	"time"
)

// perch attach marks what it shows as seen (Config.MarkSeen, the board's
// marks): when a session opens, when the user leaves it and at exit.
func TestAttachMarksSeen(t *testing.T) {
	var marks []string
	mark := func(id string, at time.Time) error {
		if at.Before(fixedNow) {
			t.Errorf("mark of %s at %v, before now", id, at)
		}
		marks = append(marks, id)
		return nil
	}
	hs := newHarness(t, 100, 30, Config{TaskID: "task-1", MarkSeen: mark})
	if len(marks) != 1 || marks[0] != "task-1" {
		t.Fatalf("on attach: %q", marks)
	}
	hs.run(hs.m.detach())
	if len(marks) != 2 {
		t.Fatalf("on leaving: %q", marks)
	}
	hs.m.markSeenAtExit() // on the list now: nothing on screen to mark
	if len(marks) != 2 {
		t.Fatalf("at exit on the list: %q", marks)
	}
}
