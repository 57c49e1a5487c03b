package outbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// A held message belongs to one session, forever. The outbox is kept per
// task id, and an id can outlive its session: maria's fake daemon (and a
// daemon that restarts with a fresh state) gives the same ids again, to
// new tasks. So a message is stamped with the session it was written for
// (AddFor, SessionStamp) and, before any of a task's messages is posted,
// the Deliverer asks the backend whether that session is still there.
// One that is gone makes its messages orphans: listed, never delivered by
// themselves, moved to another session (MoveTo), taken back or deleted by
// the user. A message without a stamp (written by an older perch, or
// before the session was known) goes to whatever session has the id, as
// it always did.

// SessionStamp is what tells a session from another that got its id
// later: its creation time as the backend reports it (maria's tasks, Suna's
// threads). "" when the backend reports none (pynchy's chats, whose ids are
// their channel's): then only a session that is gone orphans a message.
func SessionStamp(t events.Task) string {
	if t.Created.IsZero() {
		return ""
	}
	return t.Created.UTC().Format(time.RFC3339Nano)
}

// ErrOrphaned: the message's session is gone; it is not delivered.
var ErrOrphaned = errors.New("the session this message was written for is gone")

// orphanLocked marks the pending messages of task whose session is gone
// as orphans; the caller holds the delivery lock. It asks the backend only
// when some message is stamped. An unreachable backend is an error (the
// delivery is tried again later), never an orphan.
func (d *Deliverer) orphanLocked(ctx context.Context, task string) error {
	q, err := d.Store.Load(task)
	if err != nil {
		return err
	}
	stamped := false
	for _, m := range q.pending {
		if m.Session != "" && m.State != Orphaned {
			stamped = true
			break
		}
	}
	if !stamped {
		return nil
	}
	t, err := d.Backend.Session(ctx, task)
	gone := ""
	switch {
	case errors.Is(err, client.ErrNoTask) || err == nil && t.ID != task:
		gone = "no session " + task + " any more"
	case err != nil:
		return fmt.Errorf("checking that session %s is the one its messages were written for: %w", task, err)
	}
	now := SessionStamp(t)
	_, err = d.Store.Update(task, func(q *Queue) error {
		for _, m := range q.pending {
			if m.Session == "" || m.State == Orphaned {
				continue
			}
			reason := gone
			if reason == "" && now != "" && now != m.Session {
				reason = "session " + task + " is another one now (created " + now + ", this was written for the one created " + m.Session + ")"
			}
			if reason == "" {
				continue
			}
			if err := q.Orphan(m.ID, reason); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

// MoveTo moves a pending message (id or unique prefix) of task from to the
// session to (stamped stamp), at the end of its queue, as held: an orphan
// finds its session again this way. It is written to the new session's
// outbox before it is deleted from the old one, so that a crash between
// the two leaves it twice, never nowhere. A message being delivered can't
// be moved.
func MoveTo(from Store, task, id string, to Store, toTask, stamp string, now time.Time) (Message, error) {
	q, err := from.Load(task)
	if err != nil {
		return Message{}, err
	}
	m, err := q.Find(id)
	if err != nil {
		return Message{}, err
	}
	if m.State == Sending {
		return m, fmt.Errorf("message %s is being delivered: %w", m.ID, ErrState)
	}
	var added Message
	if from == to && task == toTask {
		// To the session that has the id now: one change.
		_, err := from.Update(task, func(q *Queue) error {
			if cur, ok := q.Get(m.ID); !ok || cur.State == Sending {
				return fmt.Errorf("message %s is being delivered or gone: %w", m.ID, ErrState)
			}
			if err := q.Drop(m.ID, false); err != nil {
				return err
			}
			var err error
			added, err = q.AddFor(stamp, m.Text, IntentHold, m.WebSearch, now)
			return err
		})
		return added, err
	}
	if _, err := to.Update(toTask, func(q *Queue) error {
		var err error
		added, err = q.AddFor(stamp, m.Text, IntentHold, m.WebSearch, now)
		return err
	}); err != nil {
		return m, fmt.Errorf("moving message %s to %s: %w", m.ID, toTask, err)
	}
	if _, err := from.Update(task, func(q *Queue) error {
		cur, ok := q.Get(m.ID)
		if !ok {
			return nil
		}
		if cur.State == Sending {
			return fmt.Errorf("message %s is being delivered: %w", m.ID, ErrState)
		}
		return q.Drop(m.ID, false)
	}); err != nil {
		return added, fmt.Errorf("message %s is now %s of %s, but is still in %s's outbox: %w", m.ID, added.ID, toTask, task, err)
	}
	return added, nil
}

// IsOrphan reports whether m, pending in the outbox of t's id, is an
// orphan: marked so, or its session is not t. present: the backend lists
// t; a session it does not list is gone, and so every message kept for it
// is an orphan (even one without a stamp: there is nothing to deliver it
// to). A stamp that differs from t's means the id names another session
// now. It does no IO: the Deliverer marks orphans for good before any
// delivery.
func IsOrphan(m Message, t events.Task, present bool) bool {
	switch {
	case m.State == Orphaned, !present:
		return true
	case m.Session == "":
		return false
	}
	now := SessionStamp(t)
	return now != "" && now != m.Session
}

// Tally counts q's pending messages for the task t as a list shows it:
// held (everything still to be delivered) and, among them, orphans
// (IsOrphan).
func Tally(q *Queue, t events.Task, present bool) (held, orphans int) {
	for _, m := range q.pending {
		held++
		if IsOrphan(m, t, present) {
			orphans++
		}
	}
	return held, orphans
}

// Lister is a store that can list the tasks it keeps messages for
// (FileStore, MemStore).
type Lister interface {
	Tasks() ([]string, error)
}

// Kept is a session's messages not delivered yet, and of them the
// orphans.
type Kept struct{ Held, Orphans int }

// Orphan is a message whose session is gone, and the task id whose outbox
// keeps it.
type Orphan struct {
	Task    string
	Message Message
}

// Census is perch's undelivered messages measured against the backend's
// list of sessions: what a task list shows.
type Census struct {
	Held map[string]Kept // per listed session with messages
	// Gone: the outboxes with messages of sessions the list does not
	// have (all of them orphans), by task id.
	Gone map[string]Kept
	// Orphans: every orphan, listed sessions' and gone ones', in task id
	// order, then queue order.
	Orphans []Orphan
}

// TakeCensus counts store's messages for the listed sessions (nothing, if
// the store cannot list its tasks). Outboxes it cannot read are left out:
// the list is the backend's, these counts are extra.
func TakeCensus(store Store, tasks []events.Task) (Census, error) {
	c := Census{Held: map[string]Kept{}, Gone: map[string]Kept{}}
	lister, ok := store.(Lister)
	if !ok {
		return c, nil
	}
	ids, err := lister.Tasks()
	if err != nil {
		return c, fmt.Errorf("listing the outboxes: %w", err)
	}
	listed := make(map[string]events.Task, len(tasks))
	for _, t := range tasks {
		listed[t.ID] = t
	}
	for _, id := range ids {
		q, err := store.Load(id)
		if err != nil || q.Len() == 0 {
			continue
		}
		t, ok := listed[id]
		if !ok {
			t = events.Task{ID: id}
		}
		var n Kept
		for _, m := range q.pending {
			n.Held++
			if IsOrphan(m, t, ok) {
				n.Orphans++
				c.Orphans = append(c.Orphans, Orphan{Task: id, Message: m})
			}
		}
		if ok {
			c.Held[id] = n
		} else {
			c.Gone[id] = n
		}
	}
	return c, nil
}
