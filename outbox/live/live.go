// Package live delivers perch's held messages through any live backend
// (backend.Backend): maria, Suna or pynchy. It answers "did this text
// arrive?" from one replay of the session, as the backend's Follow gives
// it, up to the point where the backend says its history is in.
package live

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
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

// Send implements outbox.Backend. The backend classifies its errors;
// backend.ErrBusy (a running session on a server without a queue) means
// the message certainly did not go and goes later: it stays held.
func (o *Outbox) Send(ctx context.Context, task string, m outbox.Message) (outbox.Receipt, error) {
	res, err := o.Backend.Send(ctx, task, backend.Message{Text: m.Text, WebSearch: m.WebSearch})
	if errors.Is(err, backend.ErrBusy) {
		return outbox.Receipt{}, outbox.Retryable(err)
	}
	if err != nil {
		return outbox.Receipt{}, err
	}
	return outbox.Receipt{ID: res.ID, Queued: res.Queued}, nil
}

// Received implements outbox.Backend: user messages with exactly that
// text created at or after since (or with no time), plus queued messages
// with that text.
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
	return n, nil
}

// errSynced stops Follow once the history is in.
var errSynced = errors.New("synced")

// Replay follows a session until the backend says its history is in
// (Update.Synced) and returns the timeline built so far. A connection
// that breaks or fails before that is an error: the check is tried again
// later rather than waited out.
func Replay(ctx context.Context, b backend.Backend, session string) (*events.Timeline, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tl := events.NewTimeline()
	var broke error
	err := b.Follow(ctx, session, func(u backend.Update) {
		if context.Cause(ctx) != nil {
			return
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
		case u.State != nil && (u.State.Phase == client.PhaseReconnecting || u.State.Phase == client.PhaseFailed):
			broke = fmt.Errorf("the stream of session %s broke: %v", session, u.State.Err)
			cancel(broke)
		}
	})
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errSynced):
		return tl, nil
	case broke != nil:
		return nil, broke
	case err == nil:
		return nil, fmt.Errorf("the stream of session %s ended before its history was in", session)
	}
	return nil, fmt.Errorf("replaying session %s: %w", session, err)
}
