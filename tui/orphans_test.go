package tui

import (
	"fmt"
	"github.com/charmbracelet/x/exp/golden"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/sse"
)

// hold writes a held message for task into store, stamped with session.
func hold(t *testing.T, store outbox.Store, task, session, text string) {
	t.Helper()
	if _, err := store.Update(task, func(q *outbox.Queue) error {
		_, err := q.AddFor(session, text, outbox.IntentHold, false, fixedNow)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

func pendingTexts(t *testing.T, store outbox.Store, task string) []string {
	t.Helper()
	q, err := store.Load(task)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range q.Pending() {
		out = append(out, m.Text)
	}
	return out
}

// Messages kept for a session the daemon does not list any more are shown
// in the held panel of the session on screen as orphans; the user moves
// one here (it is then held for this session) and takes the other back
// into the composer. Neither is sent by itself.
func TestOrphansOfAGoneSessionMovedHereOrTakenBack(t *testing.T) {
	store := outbox.NewMemStore()
	hold(t, store, "task-old", "2026-11-27T10:00:00Z", "the old follow-up")
	hold(t, store, "task-old", "2026-11-27T10:00:00Z", "and its sequel")
	hs := attachedWith(t, 120, 30, &Outbox{Store: store})
	hs.live()
	hs.taskList(events.Task{ID: "task-1", Name: "fix the parser", Status: events.StatusIdle})
	hs.contains("2 orphaned")
	hs.contains("orphan of session task ")
	hs.contains("the old follow-up")

	hs.key("shift+tab")
	hs.key("s")
	hs.contains("is an orphan: its session is gone")
	hs.key("m")
	if got := pendingTexts(t, store, "task-1"); len(got) != 1 || got[0] != "the old follow-up" {
		t.Fatalf("task-1's queue after m: %q", got)
	}
	hs.contains("it is held for this session")
	hs.contains("1 held, 1 orphaned")
	hs.key("j")
	hs.key("c")
	if got := pendingTexts(t, store, "task-old"); len(got) != 0 {
		t.Fatalf("task-old still holds %q", got)
	}
	if v := hs.m.comp.value(); v != "and its sequel" {
		t.Fatalf("composer = %q, want the orphan's text", v)
	}
	if s := hs.sent(); len(s) != 0 {
		t.Fatalf("orphans were sent by themselves: %q", s)
	}
}

// A message written for an earlier session that had this task's id (the
// daemon restarted and gave the id again) is an orphan in this session's
// panel: it is not sent when the task is idle, s refuses it, and m makes
// it this session's (then it goes like any held message).
func TestOrphanOfAnEarlierSessionWithTheSameID(t *testing.T) {
	store := outbox.NewMemStore()
	hold(t, store, "task-1", "2026-11-27T10:00:00Z", "for the old task-1")
	b := &fakeBackend{}
	hs := attachedOn(t, 120, 30, &Outbox{Store: store}, b)
	created := fixedNow.Add(-time.Hour)
	b.mu.Lock()
	b.task.Created = created
	b.mu.Unlock()
	hs.m.task.Created = created
	hs.live()
	hs.contains("∅ orphan")
	hs.contains("1 orphaned")
	hs.settle()
	if s := hs.sent(); len(s) != 0 {
		t.Fatalf("an orphan was delivered to the new session by itself: %q", s)
	}
	hs.key("shift+tab")
	hs.key("s")
	hs.contains("is an orphan")
	hs.key("m")
	q, err := store.Load("task-1")
	if err != nil {
		t.Fatal(err)
	}
	p := q.Pending()
	if len(p) != 1 || p[0].Text != "for the old task-1" || p[0].Session != outbox.SessionStamp(events.Task{Created: created}) {
		t.Fatalf("after m the queue is %+v", p)
	}
	hs.lacks("∅ orphan")
}

// The task list shows, per session, the messages perch keeps for it
// (held, and orphans among them), and a row for those of sessions that
// are gone.
func TestTaskListCountsHeldAndOrphans(t *testing.T) {
	store := outbox.NewMemStore()
	hold(t, store, "task-1", "", "one")
	hold(t, store, "task-1", "", "two")
	hold(t, store, "task-gone", "2026-11-27T10:00:00Z", "lost")
	hs := newHarness(t, 100, 20, Config{Outbox: &Outbox{Store: store}})
	hs.taskList(events.Task{ID: "task-1", Name: "fix the parser", Status: events.StatusIdle},
		events.Task{ID: "task-2", Name: "write docs", Status: events.StatusIdle})
	hs.contains("✎2")
	hs.contains("∅ 1 orphaned message of 1 session gone")
	if v := hs.view(); strings.Count(v, "✎") != 1 {
		t.Fatalf("only task-1 has held messages:\n%s", v)
	}
}

var oldCreated = fixedNow.Add(-2 * time.Hour)

func holdFor(t *testing.T, store outbox.Store, task string, s events.Task, text string) outbox.Message {
	t.Helper()
	var m outbox.Message
	if _, err := store.Update(task, func(q *outbox.Queue) error {
		var err error
		m, err = q.AddFor(outbox.SessionStamp(s), text, outbox.IntentHold, false, fixedNow)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return m
}

// countsStore keeps messages for three sessions: two held for the parser
// task, one held for the release notes and one orphan there (its id was
// another session's before), and two for a session that is gone.
func countsStore(t *testing.T, tasks []events.Task) *outbox.MemStore {
	store := outbox.NewMemStore()
	holdFor(t, store, tasks[0].ID, tasks[0], "run the tests")
	holdFor(t, store, tasks[0].ID, tasks[0], "then the CHANGELOG")
	holdFor(t, store, tasks[1].ID, tasks[1], "and the migration guide")
	holdFor(t, store, tasks[1].ID, events.Task{ID: tasks[1].ID, Created: tasks[1].Created.Add(-time.Hour)}, "for the old one")
	holdFor(t, store, "0dd0dd0d-gone", events.Task{ID: "0dd0dd0d-gone", Created: oldCreated}, "lost 1")
	holdFor(t, store, "0dd0dd0d-gone", events.Task{ID: "0dd0dd0d-gone", Created: oldCreated}, "lost 2")
	return store
}

func countsTasks() []events.Task {
	return []events.Task{
		{ID: "e3a1c9d2-0001", Name: "Fix the parser at EOF", Cwd: "/home/alice/src/parser", Status: events.StatusGenerating,
			Model: "anthropic/claude-sonnet-4.5", Created: fixedNow.Add(-5 * time.Minute),
			QueuedMessages: []events.QueuedMessage{{ID: "q1"}, {ID: "q2"}}},
		{ID: "1f2e3d4c-0002", Name: "Write the release notes for v2.3", Cwd: "/home/alice/src/perch", Status: events.StatusIdle,
			Model: "openai/gpt-5.1", Created: fixedNow.Add(-3 * time.Hour)},
		{ID: "9a8b7c6d-0003", Name: "nothing kept here", Cwd: "/srv/projects/logging", Status: events.StatusStopped, Created: fixedNow.Add(-50 * time.Hour)},
	}
}

// listWithCounts is the task list over countsStore.
func listWithCounts(t *testing.T, w, h int) *harness {
	tasks := countsTasks()
	hs := newHarness(t, w, h, Config{Outbox: &Outbox{Store: countsStore(t, tasks)}})
	live := connState{Phase: sse.PhaseLive, Since: fixedNow}
	hs.send(streamBatchMsg{Src: srcDaemon, State: &live, Tasks: tasks})
	return hs
}

// The task list shows per session the daemon's queue (⧗), perch's held
// messages (✎) and orphans (∅), and a row for the messages of sessions
// that are gone — counted by a command, after the list came.
func TestTaskListCountsQueuedHeldAndOrphans(t *testing.T) {
	hs := listWithCounts(t, 120, 30)
	rows := strings.Split(hs.view(), "\n")
	row := func(name string) string {
		for _, r := range rows {
			if strings.Contains(r, name) {
				return r
			}
		}
		t.Fatalf("no row for %q:\n%s", name, hs.view())
		return ""
	}
	for _, tc := range []struct{ name, has, lacks string }{
		{"Fix the parser at EOF", "⧗2 ✎2 ", "∅"},
		{"Write the release notes", "✎1 ∅1 ", "⧗"},
		{"nothing kept here", "", "✎"},
	} {
		r := row(tc.name)
		if !strings.Contains(r, tc.has) || strings.Contains(r, tc.lacks) {
			t.Errorf("row %q: want %q, not %q", r, tc.has, tc.lacks)
		}
	}
	hs.contains("∅ 2 orphaned messages of 1 session gone")
	checkFrame(t, hs.m)
}

func TestGoldenTaskListCounts(t *testing.T) {
	for _, sz := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			hs := listWithCounts(t, sz[0], sz[1])
			checkFrame(t, hs.m)
			golden.RequireEqual(t, hs.view())
		})
	}
}

// attachedToTask1 is attached to task-1 as the backend has it now, over
