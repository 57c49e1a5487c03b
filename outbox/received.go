package outbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// ReplayTimeout bounds one Received check made by a replay.
const ReplayTimeout = 60 * time.Second

// Received counts the user messages of a session with exactly text that
// its server got at or after since (or with no time), plus its queued
// messages with that text (maria's queue, pynchy's piped follow-ups not
// consumed yet): the answer to "did this text arrive?" after a send whose
// outcome is unknown. A backend that implements Receiver answers itself;
// any other is replayed once, up to its first Synced update, within
// ReplayTimeout.
func Received(ctx context.Context, b client.Backend, session, text string, since time.Time) (int, error) {
	if r, ok := b.(Receiver); ok {
		return r.Received(ctx, session, text, since)
	}
	ctx, cancel := context.WithTimeout(ctx, ReplayTimeout)
	defer cancel()
	tl, err := Replay(ctx, b, session)
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
func Replay(ctx context.Context, b client.Backend, session string) (*events.Timeline, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tl := events.NewTimeline()
	var broke error
	err := b.Follow(ctx, session, func(u client.Update) {
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
