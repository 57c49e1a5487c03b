package outbox

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// texts lists the pending messages' texts.
func texts(q *Queue) []string {
	var out []string
	for _, m := range q.Pending() {
		out = append(out, m.Text)
	}
	return out
}

func mustAdd(t *testing.T, q *Queue, text string, intent Intent) Message {
	t.Helper()
	m, err := q.Add(text, intent, false, t0)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestQueueOps(t *testing.T) {
	type step struct {
		name string
		do   func(q *Queue, ids []string) error
		want []string // pending texts after
		err  error
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"edit move drop", []step{
			{"edit", func(q *Queue, ids []string) error { return q.Edit(ids[1], "B2") }, []string{"A", "B2", "C"}, nil},
			{"move last to front", func(q *Queue, ids []string) error { return q.Move(ids[2], 0) }, []string{"C", "A", "B2"}, nil},
			{"move first past the end (clamped)", func(q *Queue, ids []string) error { return q.Move(ids[2], 99) }, []string{"A", "B2", "C"}, nil},
			{"drop middle", func(q *Queue, ids []string) error { return q.Drop(ids[1], false) }, []string{"A", "C"}, nil},
			{"drop again", func(q *Queue, ids []string) error { return q.Drop(ids[1], false) }, []string{"A", "C"}, ErrNoMessage},
			{"edit to empty", func(q *Queue, ids []string) error { return q.Edit(ids[0], "") }, []string{"A", "C"}, ErrEmptyText},
			{"edit to invalid UTF-8", func(q *Queue, ids []string) error { return q.Edit(ids[0], "a\xffb") }, []string{"A", "C"}, ErrInvalidText},
		}},
		{"delivery", []step{
			{"sending", func(q *Queue, ids []string) error { return q.MarkSending(ids[0], t0) }, []string{"A", "B", "C"}, nil},
			{"no edit while sending", func(q *Queue, ids []string) error { return q.Edit(ids[0], "x") }, []string{"A", "B", "C"}, ErrState},
			{"no drop while sending", func(q *Queue, ids []string) error { return q.Drop(ids[0], false) }, []string{"A", "B", "C"}, ErrState},
			{"sent", func(q *Queue, ids []string) error { return q.MarkSent(ids[0], "d1", false, false, t0) }, []string{"B", "C"}, nil},
			{"sent twice", func(q *Queue, ids []string) error { return q.MarkSent(ids[0], "d1", false, false, t0) }, []string{"B", "C"}, ErrNoMessage},
			{"sending again", func(q *Queue, ids []string) error { return q.MarkSending(ids[0], t0) }, []string{"B", "C"}, ErrNoMessage},
			{"retry failure holds", func(q *Queue, ids []string) error {
				if err := q.MarkSending(ids[1], t0); err != nil {
					return err
				}
				return q.MarkFailed(ids[1], OutcomeRetry, "daemon down")
			}, []string{"B", "C"}, nil},
			{"permanent failure", func(q *Queue, ids []string) error {
				if err := q.MarkSending(ids[2], t0); err != nil {
					return err
				}
				return q.MarkFailed(ids[2], OutcomePermanent, "task deleted")
			}, []string{"B", "C"}, nil},
			{"failed can't be sent without release", func(q *Queue, ids []string) error { return q.MarkSending(ids[2], t0) }, []string{"B", "C"}, ErrState},
			{"release a failed one", func(q *Queue, ids []string) error { return q.Release(ids[2]) }, []string{"B", "C"}, nil},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := NewQueue()
			var ids []string
			for _, s := range []string{"A", "B", "C"} {
				ids = append(ids, mustAdd(t, q, s, IntentHold).ID)
			}
			for _, s := range c.steps {
				err := s.do(q, ids)
				if want := s.err; want != nil && !errors.Is(err, want) || want == nil && err != nil {
					t.Fatalf("%s: err %v, want %v", s.name, err, s.err)
				}
				if got := texts(q); !slices.Equal(got, s.want) {
					t.Fatalf("%s: %q, want %q", s.name, got, s.want)
				}
			}
			// Replaying what the methods recorded gives the same queue.
			r := NewQueue()
			for _, rec := range q.TakeRecords() {
				if err := r.Apply(rec); err != nil {
					t.Fatal(err)
				}
			}
			if !sameQueue(q, r) {
				t.Fatalf("replay differs:\n%+v\n%+v", q.Pending(), r.Pending())
			}
		})
	}
}

func sameQueue(a, b *Queue) bool {
	eq := func(x, y []Message) bool {
		return slices.EqualFunc(x, y, func(m, n Message) bool {
			return m.ID == n.ID && m.Text == n.Text && m.State == n.State && m.Intent == n.Intent &&
				m.Err == n.Err && m.DaemonID == n.DaemonID && m.Queued == n.Queued && m.Recovered == n.Recovered &&
				m.Created.Equal(n.Created) && m.SendingAt.Equal(n.SendingAt) && m.SentAt.Equal(n.SentAt) && m.WebSearch == n.WebSearch
		})
	}
	return a.paused == b.paused && eq(a.pending, b.pending) && eq(a.sent, b.sent)
}

func TestNext(t *testing.T) {
	q := NewQueue()
	a := mustAdd(t, q, "held A", IntentHold)
	b := mustAdd(t, q, "sent B", IntentSend)
	if m, ok := q.Next(Busy); !ok || m.ID != b.ID {
		t.Fatalf("busy: a sent message goes, held ones wait: %v %v", m, ok)
	}
	if m, ok := q.Next(Idle); !ok || m.ID != a.ID {
		t.Fatalf("idle: the first held message goes: %v", m)
	}
	q.SetPaused(true)
	if m, _ := q.Next(Idle); m.ID != b.ID {
		t.Fatalf("paused: only sent messages go: %v", m)
	}
	q.MarkSending(b.ID, t0)
	if _, ok := q.Next(Idle); ok {
		t.Fatal("a sending message blocks the queue")
	}
	q.MarkFailed(b.ID, OutcomePermanent, "gone")
	q.SetPaused(false)
	if m, _ := q.Next(Idle); m.ID != a.ID {
		t.Fatalf("failed messages are skipped: %v", m)
	}
	if m, _ := q.FirstHeld(); m.ID != a.ID {
		t.Fatalf("first held: %v", m)
	}
}

func TestRecoverFromCancel(t *testing.T) {
	q := NewQueue()
	mustAdd(t, q, "mine", IntentHold)
	got, err := q.RecoverFromCancel([]string{"one", "two", "three"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"one", "two", "three", "mine"}; !slices.Equal(texts(q), want) {
		t.Fatalf("%q, want %q", texts(q), want)
	}
	if len(got) != 3 || got[0].Text != "one" || got[2].Text != "three" || got[1].State != Held {
		t.Fatalf("returned %+v", got)
	}
	if !q.Paused() {
		t.Fatal("cancel must pause auto-delivery")
	}
	recs := q.TakeRecords()
	if len(recs) != 2 || recs[1].Op != OpBatch {
		t.Fatalf("recover must be one record: %+v", recs)
	}
	// A batch with a bad record applies nothing.
	bad := Record{Op: OpBatch, Ops: []Record{{Op: OpAdd, ID: "zzzzzz", Text: "x", Intent: IntentHold}, {Op: OpEdit, ID: "nope", Text: "y"}}}
	before := texts(q)
	if err := q.Apply(bad); err == nil {
		t.Fatal("bad batch applied")
	}
	if !slices.Equal(texts(q), before) {
		t.Fatal("a failed batch changed the queue")
	}
}

func TestFind(t *testing.T) {
	q := NewQueue()
	for _, r := range []Record{
		{Op: OpAdd, ID: "abcdef", Text: "1", Intent: IntentHold},
		{Op: OpAdd, ID: "abzzzz", Text: "2", Intent: IntentHold},
		{Op: OpAdd, ID: "qqqqqq", Text: "3", Intent: IntentHold},
	} {
		if err := q.Apply(r); err != nil {
			t.Fatal(err)
		}
	}
	if m, err := q.Find("ABC"); err != nil || m.Text != "1" {
		t.Fatalf("prefix: %v %v", m, err)
	}
	if _, err := q.Find("ab"); !errors.Is(err, ErrAmbiguousID) || !strings.Contains(err.Error(), "abcdef, abzzzz") {
		t.Fatalf("ambiguous: %v", err)
	}
	if _, err := q.Find("x"); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("none: %v", err)
	}
	// NewID promises an id no message in the queue has, so each one is
	// added: 2,000 random ids that were not would collide now and then
	// (about once in 500 runs), which is no fault of NewID.
	seen := map[string]bool{}
	for i := 0; i < 2000; i++ {
		id := q.NewID()
		if len(id) != IDLen || !validID(id) || seen[id] {
			t.Fatalf("bad id %q", id)
		}
		seen[id] = true
		if err := q.Apply(Record{Op: OpAdd, ID: id, Text: "x", Intent: IntentHold}); err != nil {
			t.Fatal(err)
		}
	}
}
