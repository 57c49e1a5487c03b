// Package live delivers perch's held messages through any live backend
// (backend.Backend: maria, Suna or pynchy) without knowing which system it
// talks to.
//
//   - Outbox is the outbox.Backend of a backend.Backend: Send posts a
//     follow-up with the backend's own error classes (a running session on
//     a server without a queue is outbox.WaitForIdle, not a failure), and
//     Received answers "did this text arrive?" from one replay of the
//     session, as the backend's Follow gives it, up to Synced.
//   - Driver delivers a session's held messages when it is idle, one run at
//     a time, the way an attached perch does, for callers without a UI.
package live

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/sse"
)

// ReplayTimeout bounds one Received check.
const ReplayTimeout = 60 * time.Second

// Outbox implements outbox.Backend with a live backend.
type Outbox struct {
	Backend backend.Backend
	// Timeout overrides ReplayTimeout.
	Timeout time.Duration
}

var _ outbox.Backend = (*Outbox)(nil)

// New returns the outbox backend of b.
func New(b backend.Backend) *Outbox { return &Outbox{Backend: b} }

// Send implements outbox.Backend. The backend classifies its errors
// (outbox.Retryable, outbox.Permanent) where it knows; the rest is
// unknown. backend.ErrBusy (the session runs and the server keeps no
// queue) becomes outbox.WaitForIdle: the message stays held and goes when
// the session is idle. backend.ErrUnsupported (a backend that takes no
// follow-ups) is permanent.
//
// On a backend that neither queues nor pipes follow-ups (Suna), a message
// that was not queued started a run: the receipt says Running, so the
// Deliverer starts nothing else until the caller says the session is idle.
func (o *Outbox) Send(ctx context.Context, task string, m outbox.Message) (outbox.Receipt, error) {
	res, err := o.Backend.Send(ctx, task, backend.Message{Text: m.Text, WebSearch: m.WebSearch})
	switch {
	case err == nil:
		caps := o.Backend.Capabilities()
		return outbox.Receipt{ID: res.ID, Queued: res.Queued,
			Running: !res.Queued && !caps.ServerQueue && !caps.PipesFollowUps}, nil
	case errors.Is(err, backend.ErrBusy):
		return outbox.Receipt{}, outbox.WaitForIdle(err)
	case outbox.OutcomeOf(err) != outbox.OutcomeUnknown:
		return outbox.Receipt{}, err
	case errors.Is(err, backend.ErrUnsupported):
		return outbox.Receipt{}, outbox.Permanent(err)
	}
	return outbox.Receipt{}, err
}

// Received implements outbox.Backend: the user messages of the session
// with exactly that text created at or after since (or with no time),
// plus its queued messages with that text (maria's queue, pynchy's piped
// follow-ups), counted in one replay up to Synced.
func (o *Outbox) Received(ctx context.Context, task, text string, since time.Time) (int, error) {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = ReplayTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tl, err := Replay(ctx, o.Backend, task)
	if err != nil {
		return 0, err
	}
	return Count(tl, text, since), nil
}

// Count is Received's rule on a timeline: user messages with exactly text
// created at or after since (or with no time), plus queued messages with
// that text (they have no time).
func Count(tl *events.Timeline, text string, since time.Time) int {
	n := 0
	for _, it := range tl.Items() {
		if it.Kind == events.ItemUser && it.Text == text && (it.Created.IsZero() || !it.Created.Before(since)) {
			n++
		}
	}
	for _, q := range tl.Queue() {
		if q.Text == text {
			n++
		}
	}
	return n
}

// errSynced stops Follow once the history is in.
var errSynced = errors.New("synced")

// Replay follows a session until the backend says its history is in (the
// first Update with Synced) and returns the timeline built so far. A
// connection that breaks or fails before that is an error: the check is
// tried again later rather than waited out. It starts no goroutine: Follow
// runs on the caller's and returns once ctx is cancelled.
func Replay(ctx context.Context, b backend.Backend, session string) (*events.Timeline, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tl := events.NewTimeline()
	var broke error
	err := b.Follow(ctx, session, func(u backend.Update) {
		if context.Cause(ctx) != nil {
			return // stopped: a late update changes nothing
		}
		if u.Reset {
			tl = events.NewTimeline()
		}
		for _, ev := range u.Events {
			tl.Apply(ev)
		}
		switch {
		case u.Synced:
			cancel(errSynced)
		case u.State != nil && (u.State.Phase == sse.PhaseReconnecting || u.State.Phase == sse.PhaseFailed):
			broke = fmt.Errorf("the stream of session %s at %s broke before its history was in: %v", session, b.URL(), u.State.Err)
			cancel(broke)
		}
	})
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errSynced):
		return tl, nil
	case broke != nil:
		return nil, broke
	case err == nil:
		return nil, fmt.Errorf("the stream of session %s at %s ended before its history was in", session, b.URL())
	}
	return nil, fmt.Errorf("replaying session %s at %s: %w", session, b.URL(), err)
}
