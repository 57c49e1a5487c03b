package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/board"
)

// A session that starts asking for permission (a local CLI's prompt)
// rings the terminal and names why, as a finished run does.
func TestBoardNotifiesOfPermissionPrompt(t *testing.T) {
	fb := threeSources()
	hs, _ := boardHarness(t, 120, 30, fb)
	at := func(d time.Duration) time.Time { return fixedNow.Add(-d) }
	list := func(st board.Status, waitingFor string) []board.Session {
		return []board.Session{
			{ID: "thread-7f3a", Name: "release notes", Status: board.Idle, Updated: at(2 * time.Minute)},
			{ID: "thread-91bc", Name: "triage", Status: st, WaitingFor: waitingFor, Updated: fixedNow},
		}
	}
	fb.m.SetSessions("work", list(board.Generating, ""), fixedNow)
	hs.send(boardUpdatedMsg{})
	rawOut(hs)
	fb.m.SetSessions("work", list(board.Waiting, "permission prompt"), fixedNow)
	hs.send(boardUpdatedMsg{})
	if out := rawOut(hs); !strings.Contains(out, "\x1b]9;perch: triage (work): it asks your permission") {
		t.Fatalf("no notification of the prompt: %q", out)
	}
	if !strings.Contains(hs.view(), "waiting") {
		t.Errorf("the board does not say waiting:\n%s", hs.view())
	}
}
