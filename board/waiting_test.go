package board

import (
	"testing"

	"github.com/perch-tui/perch/events"
)

// A local CLI's session waiting on the user needs you, with the reason it
// gives, first on the board; a run that stops to ask is not over, and an
// exited process is not idle.
func TestWaitingNeedsYou(t *testing.T) {
	m := newTestModel()
	task := func(id, status, waitingFor string, s int) Session {
		t := FromTask(events.Task{ID: id, Status: status, WaitingFor: waitingFor, Updated: at(s)})
		return t
	}
	m.SetSessions("m", []Session{task("a", events.StatusGenerating, "", 1), task("b", events.StatusIdle, "", 2)}, at(10))
	steps := []struct {
		name    string
		list    []Session
		changes string
		rows    string
	}{
		{"a asks permission", []Session{task("a", events.StatusWaiting, "permission prompt", 11), task("b", events.StatusIdle, "", 2)},
			"m/a generating→waiting permission\n",
			"m/a waiting permission unread=0 held=0\nm/b idle  unread=0 held=0\n"},
		{"b asks a question", []Session{task("a", events.StatusWaiting, "permission prompt", 11), task("b", events.StatusWaiting, "input needed", 12)},
			"m/b idle→waiting input\n",
			"m/b waiting input unread=0 held=0\nm/a waiting permission unread=0 held=0\n"},
		{"a goes on: back to work, no run ended", []Session{task("a", events.StatusGenerating, "", 13), task("b", events.StatusWaiting, "input needed", 12)},
			"m/a waiting→generating \n",
			"m/b waiting input unread=0 held=0\nm/a generating  unread=0 held=0\n"},
		{"b is killed while it asks: its run ended", []Session{task("a", events.StatusGenerating, "", 13), task("b", events.StatusExited, "", 14)},
			"m/b waiting→exited reply\n",
			"m/b exited reply unread=1 held=0\nm/a generating  unread=0 held=0\n"},
	}
	for _, st := range steps {
		if got := changeLines(m.SetSessions("m", st.list, at(20))); got != st.changes {
			t.Errorf("%s: changes\n%s\nwant\n%s", st.name, got, st.changes)
		}
		if got := rowLines(m.Rows(Filter{})); got != st.rows {
			t.Errorf("%s: rows\n%s\nwant\n%s", st.name, got, st.rows)
		}
	}
	if n := m.NeedsYou(); n != 1 {
		t.Errorf("NeedsYou %d", n)
	}
}
