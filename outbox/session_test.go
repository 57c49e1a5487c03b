package outbox

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// sessions is a backend whose sessions can come and go, and whose ids are
// reused: like the fake daemon after a restart.
type sessions struct {
	stubBackend
	mu   sync.Mutex
	live map[string]time.Time // id -> created
	got  map[string][]string  // id@created -> texts received
}

func newSessions() *sessions {
	return &sessions{live: map[string]time.Time{}, got: map[string][]string{}}
}

func (b *sessions) set(id string, created time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if created.IsZero() {
		delete(b.live, id)
		return
	}
	b.live[id] = created
}

func (b *sessions) Session(_ context.Context, id string) (events.Task, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.live[id]
	if !ok {
		return events.Task{}, &client.NoTaskError{Query: id}
	}
	return events.Task{ID: id, Created: c, Status: events.StatusIdle}, nil
}

func (b *sessions) Send(_ context.Context, id string, m client.Message) (client.SendResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.live[id]
	if !ok {
		return client.SendResult{}, client.Permanent(errors.New("404"))
	}
	k := id + "@" + c.Format(time.RFC3339Nano)
	b.got[k] = append(b.got[k], m.Text)
	return client.SendResult{ID: "d"}, nil
}

func (b *sessions) received(id string, created time.Time) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.got[id+"@"+created.Format(time.RFC3339Nano)])
}

// A held message belongs to the session it was written for: after a
// restart that gave its id to a new session, or with its session gone, it
// becomes an orphan and is delivered nowhere; moved to a session, it is
// delivered there. A message without a stamp (an older journal) goes to
// whatever has the id, as before.
func TestHeldMessageBelongsToItsSession(t *testing.T) {
	ctx := context.Background()
	t1 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	old := events.Task{ID: "t1", Created: t1}

	t.Run("same session: delivered", func(t *testing.T) {
		be, s := newSessions(), NewMemStore()
		be.set("t1", t1)
		hold(t, s, "t1", SessionStamp(old), "X")
		d := &Deliverer{Store: s, Backend: be}
		if r, err := d.Next(ctx, "t1", Idle); err != nil || !r.Delivered {
			t.Fatalf("Next = %+v, %v", r, err)
		}
		if got := be.received("t1", t1); !slices.Equal(got, []string{"X"}) {
			t.Fatalf("received %q", got)
		}
	})
	for _, tc := range []struct {
		name    string
		created time.Time // zero: gone
		reason  string
	}{
		{"the id is another session's now", t2, "another one now"},
		{"the session is gone", time.Time{}, "no session t1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be, s := newSessions(), NewMemStore()
			hold(t, s, "t1", SessionStamp(old), "X")
			be.set("t1", tc.created)
			d := &Deliverer{Store: s, Backend: be}
			r, err := d.Next(ctx, "t1", Idle)
			if err != nil || r.Delivered {
				t.Fatalf("Next = %+v, %v: want nothing delivered, no error", r, err)
			}
			if !tc.created.IsZero() {
				if got := be.received("t1", tc.created); len(got) != 0 {
					t.Fatalf("delivered into the new session: %q", got)
				}
			}
			if _, err := d.Release(ctx, "t1", ""); !errors.Is(err, ErrOrphaned) {
				t.Fatalf("Release of an orphan: %v", err)
			}
			q := load(t, s, "t1")
			o := q.Orphans()
			if len(o) != 1 || o[0].Text != "X" || !strings.Contains(o[0].Err, tc.reason) {
				t.Fatalf("orphans %+v", o)
			}
			p := NewPace(be.Capabilities())
			if n := p.Note(q); n != NoteOrphaned {
				t.Fatalf("Note = %q", n)
			}
			// Moved to another session: delivered there, once.
			be.set("t9", t2)
			m, err := MoveTo(s, "t1", o[0].ID, s, "t9", SessionStamp(events.Task{ID: "t9", Created: t2}), t2)
			if err != nil {
				t.Fatal(err)
			}
			if q := load(t, s, "t1"); q.Len() != 0 {
				t.Fatalf("still in t1: %+v", q.Pending())
			}
			if r, err := d.Next(ctx, "t9", Idle); err != nil || !r.Delivered || r.Message.ID != m.ID {
				t.Fatalf("Next on t9 = %+v, %v", r, err)
			}
			if got := be.received("t9", t2); !slices.Equal(got, []string{"X"}) {
				t.Fatalf("t9 received %q", got)
			}
		})
	}
	t.Run("no stamp (an older journal): delivered to whatever has the id", func(t *testing.T) {
		be, s := newSessions(), NewMemStore()
		s.SetJournal("t1", []byte(`{"op":"add","id":"k3x9qa","text":"X","intent":"hold","at":"2025-03-01T12:00:00Z"}`+"\n"))
		be.set("t1", t2)
		d := &Deliverer{Store: s, Backend: be}
		if r, err := d.Next(ctx, "t1", Idle); err != nil || !r.Delivered {
			t.Fatalf("Next = %+v, %v", r, err)
		}
	})
	t.Run("backend unreachable: an error, no orphan", func(t *testing.T) {
		s := NewMemStore()
		hold(t, s, "t1", SessionStamp(old), "X")
		d := &Deliverer{Store: s, Backend: unreachableSessions{newSessions()}}
		if _, err := d.Next(ctx, "t1", Idle); err == nil {
			t.Fatal("no error")
		}
		if q := load(t, s, "t1"); len(q.Orphans()) != 0 || q.Pending()[0].State != Held {
			t.Fatalf("queue %+v", q.Pending())
		}
	})
	t.Run("the stamp survives the journal", func(t *testing.T) {
		s := NewMemStore()
		hold(t, s, "t1", SessionStamp(old), "X")
		if !strings.Contains(string(s.Journal("t1")), `"session":"2025-03-01T12:00:00Z"`) {
			t.Fatalf("journal %s", s.Journal("t1"))
		}
		if m := load(t, s, "t1").Pending()[0]; m.Session != SessionStamp(old) {
			t.Fatalf("loaded %+v", m)
		}
	})
}

type unreachableSessions struct{ *sessions }

func (unreachableSessions) Session(context.Context, string) (events.Task, error) {
	return events.Task{}, errors.New("connection refused")
}

func hold(t *testing.T, s Store, task, stamp, text string) {
	t.Helper()
	if _, err := s.Update(task, func(q *Queue) error {
		_, err := q.AddFor(stamp, text, IntentHold, false, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

func TestTally(t *testing.T) {
	t1 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	task1 := events.Task{ID: "t1", Created: t1}
	s := NewMemStore()
	hold(t, s, "t1", SessionStamp(task1), "mine")
	hold(t, s, "t1", "", "unstamped")
	q := load(t, s, "t1")
	for _, tc := range []struct {
		name          string
		t             events.Task
		present       bool
		held, orphans int
	}{
		{"its session", task1, true, 2, 0},
		{"the id names another session", events.Task{ID: "t1", Created: t1.Add(time.Second)}, true, 2, 1},
		{"a session that does not say when it was created", events.Task{ID: "t1"}, true, 2, 0},
		{"gone: every message is an orphan, stamped or not", events.Task{ID: "t1"}, false, 2, 2},
	} {
		if h, o := Tally(q, tc.t, tc.present); h != tc.held || o != tc.orphans {
			t.Errorf("%s: Tally = %d, %d; want %d, %d", tc.name, h, o, tc.held, tc.orphans)
		}
	}
}

// A task list's counts: held and orphans per listed session (a reused id
// makes the old session's messages orphans), and the outboxes of sessions
// that are gone, every message an orphan.
func TestTakeCensus(t *testing.T) {
	t1 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	old, now := events.Task{ID: "t1", Created: t1}, events.Task{ID: "t1", Created: t1.Add(time.Hour)}
	s := NewMemStore()
	hold(t, s, "t1", SessionStamp(old), "of the old t1")
	hold(t, s, "t1", SessionStamp(now), "of this t1")
	hold(t, s, "t2", "", "t2's")
	hold(t, s, "gone", "", "of a gone session")
	if _, err := s.Update("empty", func(q *Queue) error {
		m, err := q.Add("sent", IntentHold, false, t1)
		if err != nil {
			return err
		}
		return q.Drop(m.ID, false)
	}); err != nil {
		t.Fatal(err)
	}
	c, err := TakeCensus(s, []events.Task{now, {ID: "t2"}, {ID: "empty"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]Kept{"t1": {2, 1}, "t2": {1, 0}}; !maps.Equal(c.Held, want) {
		t.Errorf("Held = %v, want %v", c.Held, want)
	}
	if want := map[string]Kept{"gone": {1, 1}}; !maps.Equal(c.Gone, want) {
		t.Errorf("Gone = %v, want %v", c.Gone, want)
	}
	var got []string
	for _, o := range c.Orphans {
		got = append(got, o.Task+":"+o.Message.Text)
	}
	if want := []string{"gone:of a gone session", "t1:of the old t1"}; !slices.Equal(got, want) {
		t.Errorf("Orphans = %q, want %q", got, want)
	}
	if c, err := TakeCensus(storeOnly{s}, []events.Task{now}); err != nil || len(c.Orphans)+len(c.Held)+len(c.Gone) != 0 {
		t.Errorf("a store that cannot list: %+v, %v", c, err)
	}
}

// storeOnly hides a store's Tasks.
type storeOnly struct{ Store }

// The session on screen adopts an orphan kept in its own outbox (the id
// was reused): it becomes a held message of this session, under its
// identity, and is delivered to it; the old session's stamp is gone. A
// message being delivered is not moved.
func TestMoveToTheSessionThatHasTheIDNow(t *testing.T) {
	ctx := context.Background()
	t1, t2 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), time.Date(2025, 3, 1, 13, 0, 0, 0, time.UTC)
	be, s := newSessions(), NewMemStore()
	hold(t, s, "t1", SessionStamp(events.Task{ID: "t1", Created: t1}), "X")
	be.set("t1", t2)
	d := &Deliverer{Store: s, Backend: be}
	if r, err := d.Next(ctx, "t1", Idle); err != nil || r.Delivered {
		t.Fatalf("Next = %+v, %v", r, err)
	}
	o := load(t, s, "t1").Orphans()
	if len(o) != 1 {
		t.Fatalf("orphans %+v", load(t, s, "t1").Pending())
	}
	stamp := SessionStamp(events.Task{ID: "t1", Created: t2})
	m, err := MoveTo(s, "t1", o[0].ID, s, "t1", stamp, t2)
	if err != nil {
		t.Fatal(err)
	}
	q := load(t, s, "t1")
	if p := q.Pending(); len(p) != 1 || p[0].ID != m.ID || p[0].State != Held || p[0].Session != stamp || p[0].Text != "X" {
		t.Fatalf("after the move: %+v", p)
	}
	if r, err := d.Release(ctx, "t1", m.ID); err != nil || !r.Delivered {
		t.Fatalf("Release = %+v, %v", r, err)
	}
	if got := be.received("t1", t2); !slices.Equal(got, []string{"X"}) {
		t.Fatalf("received %q", got)
	}
	if _, err := MoveTo(s, "t1", m.ID, s, "t2", stamp, t2); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("moving a delivered message: %v", err)
	}

	// Being delivered: not moved.
	hold(t, s, "t1", stamp, "Y")
	y := load(t, s, "t1").Pending()[0]
	if _, err := s.Update("t1", func(q *Queue) error { return q.MarkSending(y.ID, t2) }); err != nil {
		t.Fatal(err)
	}
	if _, err := MoveTo(s, "t1", y.ID, s, "t2", "", t2); !errors.Is(err, ErrState) {
		t.Fatalf("moving a message being delivered: %v", err)
	}
}

// Taking an orphan back (into an editor, the composer): Drop returns its
// text and it is gone from the outbox; nothing is delivered.
func TestTakeAnOrphanBack(t *testing.T) {
	ctx := context.Background()
	t1 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	be, s := newSessions(), NewMemStore()
	hold(t, s, "t1", SessionStamp(events.Task{ID: "t1", Created: t1}), "X")
	d := &Deliverer{Store: s, Backend: be}
	if _, err := d.Next(ctx, "t1", Idle); err != nil {
		t.Fatal(err)
	}
	o := load(t, s, "t1").Orphans()
	if len(o) != 1 {
		t.Fatalf("no orphan: %+v", load(t, s, "t1").Pending())
	}
	m, err := d.Drop(ctx, "t1", o[0].ID)
	if err != nil || m.Text != "X" {
		t.Fatalf("Drop = %+v, %v", m, err)
	}
	if q := load(t, s, "t1"); q.Len() != 0 {
		t.Fatalf("still kept: %+v", q.Pending())
	}
	if len(be.got) != 0 {
		t.Fatalf("delivered: %v", be.got)
	}
}
