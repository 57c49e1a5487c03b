package maria

import (
	"time"

	"github.com/perch-tui/perch/events"
)

// Settle is how long a connected task stream must stay quiet (no frame, no
// byte, no event half received) before its replay counts as complete:
// maria sends no marker between the replayed log and live events.
const Settle = 600 * time.Millisecond

// ReplayEnd decides when the replay of a task stream is in, the point where
// Follow sends an Update with Synced. Follow feeds it everything the stream
// does, in order, from one goroutine, and asks Quiet after each step.
//
// The rule is its own type so that a smarter one (one that also weighs the
// task's status, or the run's end seen in the replay, to end sooner) can
// replace the default without touching Follow: see Backend.ReplayEnd.
type ReplayEnd interface {
	// Connected: a connection opened; it replays the log from the start.
	Connected()
	// Decoded: the events one frame brought, after the decoder dropped
	// what an earlier connection delivered (possibly none).
	Decoded(evs []events.Event)
	// Closed: the connection ended or could not open; clean is a clean
	// close by the server. True means this proves the replay was in.
	Closed(clean bool) bool
	// Quiet is how long the connected stream must now stay quiet for
	// the replay to count as in; 0 or less: quiet time proves nothing.
	Quiet() time.Duration
}

// Waker is implemented by a ReplayEnd that learns things in the
// background (a status fetched in parallel): a receive on Wake makes
// Follow ask Quiet again, measuring it from the last activity.
type Waker interface {
	Wake() <-chan struct{}
}

// QuietEnd is the rule perch has always used: the replay is in once the
// connected stream stayed quiet for a fixed time, or — behind a server or
// proxy that closes the stream after each replay — once a clean close
// follows a whole replay, itself after a clean close, that brought nothing
// new.
type QuietEnd struct {
	// Window is the quiet time (0: Settle).
	Window time.Duration

	seenAny    bool // some connection brought something new
	connNew    bool // this connection did (or is the first one)
	live       bool // connected now
	cleanClose bool // the last connection ended with a clean close
}

// NewQuietEnd returns the default rule with a quiet window (0: Settle).
func NewQuietEnd(window time.Duration) *QuietEnd { return &QuietEnd{Window: window} }

// Connected implements ReplayEnd.
func (q *QuietEnd) Connected() {
	q.live = true
	// An empty first replay must not look like "nothing new".
	q.connNew = !q.seenAny
}

// Decoded implements ReplayEnd. A queue snapshot is a state replayed with
// the log each time, so it is no news by itself.
func (q *QuietEnd) Decoded(evs []events.Event) {
	for i := range evs {
		if evs[i].Kind != events.KindQueueSnapshot {
			q.seenAny, q.connNew = true, true
			return
		}
	}
}

// Closed implements ReplayEnd.
func (q *QuietEnd) Closed(clean bool) bool {
	replayed := clean && q.cleanClose && !q.connNew && q.live
	q.cleanClose = clean
	q.live = false
	return replayed
}

// Quiet implements ReplayEnd.
func (q *QuietEnd) Quiet() time.Duration {
	if q.Window > 0 {
		return q.Window
	}
	return Settle
}
