package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/perch-tui/perch/client"
)

// Receiver is the one optional extension of client.Backend the outbox
// knows: a backend that can count what its server received more cheaply
// than by a replay of the session. Without it the Deliverer replays the
// session (Follow up to Synced) and counts there (see Received).
type Receiver interface {
	// Received counts the user messages of the session whose text is
	// exactly text and that the server got at or after since (by its own
	// clock; messages it has no time for, like queued ones, count whatever
	// since): its transcript and its queue.
	Received(ctx context.Context, session, text string, since time.Time) (int, error)
}

// RecoverySkew widens the window Received is asked about, for clocks that
// disagree between perch and the backend.
const RecoverySkew = time.Minute

type classified struct {
	err     error
	outcome Outcome
}

func (e *classified) Error() string { return e.err.Error() }
func (e *classified) Unwrap() error { return e.err }

// Is makes errors.Is(err, ErrBusy) true for a WaitForIdle error.
func (e *classified) Is(target error) bool { return target == ErrBusy && e.outcome == OutcomeBusy }

// ErrBusy is what errors.Is finds in an error of Next, Flush or Release
// when the message was not delivered because the session is running and
// its backend keeps no queue (see WaitForIdle). It is not a failure: the message
// is held, Waiting, and goes at the next Next(Idle).
var ErrBusy = errors.New("the session is running and its server keeps no queue")

// WaitForIdle marks a Send error after which the message certainly did not
// arrive because the session is running and the backend keeps no queue of
// its own: perch holds it until the caller says the session is idle.
func WaitForIdle(err error) error {
	if err == nil {
		return nil
	}
	return &classified{err, OutcomeBusy}
}

// OutcomeOf classifies a Send error: WaitForIdle's mark, else the class
// the backend gave it (client.Retryable, client.Permanent), else
// OutcomeUnknown.
func OutcomeOf(err error) Outcome {
	var c *classified
	if errors.As(err, &c) {
		return c.outcome
	}
	switch client.ClassOf(err) {
	case client.SendRetryable:
		return OutcomeRetry
	case client.SendPermanent:
		return OutcomePermanent
	}
	return OutcomeUnknown
}

// Deliverer takes messages from a Store to a session of a client.Backend,
// one at a time under the task's delivery lock, so that each is delivered
// at most once, and, with a backend whose Follow says Synced (or that
// implements Receiver), exactly once.
//
// Its methods do IO and may take seconds: a UI calls them from a command
// (a goroutine), never from its update loop. They may be called from
// several goroutines; a Deliverer must not be copied after first use.
//
// Busy sessions: when the backend answers busy (client.ErrBusy), the
// message goes back to held (Waiting, no error) and the Deliverer
// remembers the task as busy: Next(Busy) and Flush post nothing more to
// it, and do not ask the backend, until the caller says the session is
// idle again with Next(Idle) (the same call that delivers held messages on
// idle) or a send to it succeeds (Release posts whatever the pause). A
// message that started a run on such a server (see send) pauses the task
// the same way. The memory is this Deliverer's only: another process asks
// the backend once and learns the same. Pace is the rule that says when a
// caller makes that call.
type Deliverer struct {
	Store Store
	// Backend is the system the tasks live on; a task is one of its
	// sessions.
	Backend client.Backend
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu   sync.Mutex
	busy map[string]error // task -> the Busy error that paused it
}

// Result is what one delivery attempt did.
type Result struct {
	// Message is the message after the attempt; its ID is "" when nothing
	// was due.
	Message Message
	// Delivered: the backend accepted it now, or already had it.
	Delivered bool
	// Busy: it was not delivered because the session is running and its
	// backend keeps no queue; it is held (Waiting) until the session is
	// idle. The error returned with it satisfies errors.Is(err, ErrBusy).
	Busy bool
}

// ErrNotDue: Release was asked for a message that is not held (it is
// being delivered, or is gone).
var ErrNotDue = errors.New("the message is not waiting to be delivered")

func (d *Deliverer) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Deliverer) setBusy(task string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		delete(d.busy, task)
		return
	}
	if d.busy == nil {
		d.busy = make(map[string]error)
	}
	d.busy[task] = err
}

func (d *Deliverer) busyErr(task string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.busy[task]
}

// Waiting reports whether the task is paused as busy: the backend said
// its session is running and keeps no queue, and no Next(Idle) came since.
func (d *Deliverer) Waiting(task string) bool { return d.busyErr(task) != nil }

// Next delivers the first message that is due in mode (see Queue.Next): on
// a task that became idle, Next(Idle); when the backend is back after an
// outage, Next(Busy) until nothing is due (or Flush). Messages left Sending
// by an earlier perch are resolved first. Nothing due is Result{} and no
// error. A failed attempt returns its error; the message stays in the
// queue with the reason.
//
// Next(Idle) is also the caller's word that the session is idle: it ends a
// busy pause (see Deliverer). While a task is paused as busy, Next(Busy)
// posts nothing: it returns the message that is due with Busy set and an
// error that satisfies errors.Is(err, ErrBusy).
func (d *Deliverer) Next(ctx context.Context, task string, mode Mode) (Result, error) {
	if mode == Idle {
		d.setBusy(task, nil)
	} else if r, paused, err := d.paused(task); paused {
		return r, err // the common case, without waiting for the lock
	}
	return d.deliver(ctx, task, mode == Busy, func(q *Queue) (Message, error) {
		m, ok := q.Next(mode)
		if !ok {
			return Message{}, nil
		}
		return m, nil
	})
}

// paused answers Next(Busy) on a task paused as busy: the message that is
// due, not posted.
func (d *Deliverer) paused(task string) (Result, bool, error) {
	busy := d.busyErr(task)
	if busy == nil {
		return Result{}, false, nil
	}
	q, err := d.Store.Load(task)
	if err != nil {
		return Result{}, true, err
	}
	m, ok := q.Next(Busy)
	if !ok {
		return Result{}, true, nil
	}
	return Result{Message: m, Busy: true}, true, fmt.Errorf("%w (message %s waits until the session is idle)", busy, m.ID)
}

// Release delivers one held (or failed) message now, idle or busy, paused
// or not: the one with id (a unique prefix works), or the first one if id
// is "". If it cannot be delivered, it stays with the reason and is
// delivered as soon as the backend answers again (its intent is now send).
func (d *Deliverer) Release(ctx context.Context, task, id string) (Result, error) {
	return d.deliver(ctx, task, false, func(q *Queue) (Message, error) {
		var m Message
		if id == "" {
			var ok bool
			if m, ok = q.FirstHeld(); !ok {
				if o := q.Orphans(); len(o) > 0 {
					m = o[0]
				} else {
					return Message{}, fmt.Errorf("no held message: %w", ErrNoMessage)
				}
			}
		} else {
			var err error
			if m, err = q.Find(id); err != nil {
				return Message{}, err
			}
		}
		if m.State == Orphaned {
			return Message{}, fmt.Errorf("message %s (%s): %w", m.ID, m.Err, ErrOrphaned)
		}
		if m.State != Held && m.State != Failed {
			return Message{}, fmt.Errorf("message %s is %s: %w", m.ID, m.State, ErrNotDue)
		}
		if err := q.Release(m.ID); err != nil {
			return Message{}, err
		}
		m, _ = q.Get(m.ID)
		return m, nil
	})
}

// Flush delivers, in order, every message the user sent that is waiting
// (after an outage), stopping at the first failure or at a busy session
// (Result.Busy, errors.Is(err, ErrBusy)).
func (d *Deliverer) Flush(ctx context.Context, task string) ([]Result, error) {
	var out []Result
	for {
		r, err := d.Next(ctx, task, Busy)
		if r.Message.ID != "" {
			out = append(out, r)
		}
		if err != nil || r.Message.ID == "" {
			return out, err
		}
	}
}

// Recover resolves the messages left Sending by a perch that died (or got
// no answer): each one the backend already has is marked sent, the others
// are held again, in order. It returns the messages it resolved.
func (d *Deliverer) Recover(ctx context.Context, task string) ([]Message, error) {
	unlock, err := d.Store.LockDelivery(ctx, task)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return d.recoverLocked(ctx, task)
}

// Drop deletes a pending message (id or unique prefix). A message left
// Sending can be dropped only while no perch is delivering it.
func (d *Deliverer) Drop(ctx context.Context, task, id string) (Message, error) {
	var m Message
	_, err := d.Store.Update(task, func(q *Queue) error {
		var err error
		if m, err = q.Find(id); err != nil {
			return err
		}
		if m.State == Sending {
			return ErrState
		}
		return q.Drop(m.ID, false)
	})
	if !errors.Is(err, ErrState) {
		return m, err
	}
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	unlock, err := d.Store.LockDelivery(lctx, task)
	if err != nil {
		return m, fmt.Errorf("message %s is being delivered right now: %w", m.ID, err)
	}
	defer unlock()
	_, err = d.Store.Update(task, func(q *Queue) error { return q.Drop(m.ID, true) })
	return m, err
}

// deliver runs one attempt under the delivery lock: resolve leftovers,
// pick (which may change the queue, e.g. Release) and mark sending in one
// Update, send, record the outcome. With gated, a task paused as busy
// posts nothing (checked under the lock: a send that started a run while
// this call waited for the lock pauses it).
func (d *Deliverer) deliver(ctx context.Context, task string, gated bool, pick func(*Queue) (Message, error)) (Result, error) {
	unlock, err := d.Store.LockDelivery(ctx, task)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	if err := d.orphanLocked(ctx, task); err != nil {
		return Result{}, err
	}
	if _, err := d.recoverLocked(ctx, task); err != nil {
		return Result{}, err
	}
	if gated {
		if r, paused, err := d.paused(task); paused {
			return r, err
		}
	}
	var m Message
	_, err = d.Store.Update(task, func(q *Queue) error {
		var err error
		if m, err = pick(q); err != nil || m.ID == "" {
			return err
		}
		return q.MarkSending(m.ID, d.now())
	})
	if err != nil || m.ID == "" {
		return Result{}, err
	}
	rec, running, sendErr := d.send(ctx, task, m)
	outcome := OutcomeOf(sendErr)
	busy := sendErr != nil && outcome == OutcomeBusy
	switch {
	case busy:
		d.setBusy(task, sendErr)
	case sendErr == nil && running:
		d.setBusy(task, WaitForIdle(fmt.Errorf("message %s started a run: %w", m.ID, ErrBusy)))
	case sendErr == nil:
		d.setBusy(task, nil)
	}
	q, err := d.Store.Update(task, func(q *Queue) error {
		switch {
		case sendErr == nil:
			return q.MarkSent(m.ID, rec.ID, rec.Queued, false, d.now())
		case busy:
			// Not a failure: no reason is kept, the message just waits.
			return q.MarkFailed(m.ID, OutcomeBusy, "")
		}
		return q.MarkFailed(m.ID, outcome, sendErr.Error())
	})
	if q != nil {
		if after, ok := q.Get(m.ID); ok {
			m = after
		}
	}
	if err != nil {
		// The outcome could not be written: the message stays Sending and
		// is checked against the backend before any resend.
		if sendErr != nil {
			return Result{Message: m}, errors.Join(sendErr, err)
		}
		return Result{Message: m, Delivered: true}, err
	}
	return Result{Message: m, Delivered: sendErr == nil, Busy: busy}, sendErr
}

// recoverLocked resolves Sending messages; the caller holds the delivery
// lock, so none of them is in flight. Each is counted on the backend in
// the window since its send began, against the messages with the same
// text this outbox knows it delivered in that window.
func (d *Deliverer) recoverLocked(ctx context.Context, task string) ([]Message, error) {
	q, err := d.Store.Load(task)
	if err != nil {
		return nil, err
	}
	var done []Message
	for _, m := range q.Pending() {
		if m.State != Sending {
			continue
		}
		since := m.SendingAt.Add(-RecoverySkew)
		n, err := Received(ctx, d.Backend, task, m.Text, since)
		if err != nil {
			return done, fmt.Errorf("checking whether message %s reached the agent: %w", m.ID, err)
		}
		q, err = d.Store.Update(task, func(q *Queue) error {
			cur, ok := q.Get(m.ID)
			if !ok || cur.State != Sending {
				return nil // dropped or resolved meanwhile
			}
			known := 0
			for _, s := range q.sent {
				if s.Text == m.Text && !s.SendingAt.Before(since) {
					known++
				}
			}
			if n > known {
				return q.MarkSent(m.ID, "", false, true, d.now())
			}
			return q.Requeue(m.ID)
		})
		if err != nil {
			return done, err
		}
		if after, ok := q.Get(m.ID); ok {
			done = append(done, after)
		}
	}
	return done, nil
}

// send posts m to the session and classifies the answer for the queue.
// The backend marks what it knows (client.Retryable: the request never
// went out; client.Permanent: refused); client.ErrBusy (the session runs and its server
// keeps no queue) becomes WaitForIdle: held, not failed;
// client.ErrUnsupported (no follow-ups) is permanent; anything else
// stays unknown, checked with Received before any resend.
//
// running: on a server that neither queues nor pipes follow-ups (Suna),
// a message it did not queue started a run, and the next one must wait
// for the caller's next idle.
func (d *Deliverer) send(ctx context.Context, task string, m Message) (client.SendResult, bool, error) {
	res, err := d.Backend.Send(ctx, task, client.Message{Text: m.Text, WebSearch: m.WebSearch})
	switch {
	case err == nil:
		caps := d.Backend.Capabilities()
		return res, !res.Queued && !caps.ServerQueue && !caps.PipesFollowUps, nil
	case errors.Is(err, client.ErrBusy):
		return res, false, WaitForIdle(err)
	case OutcomeOf(err) != OutcomeUnknown:
		return res, false, err
	case errors.Is(err, client.ErrUnsupported):
		return res, false, client.Permanent(err)
	}
	return res, false, err
}
