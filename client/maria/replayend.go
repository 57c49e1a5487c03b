package maria

import (
	"context"
	"github.com/perch-tui/perch/events"
	"sync"
	"time"
)

// Settle is how long a connected task stream must stay quiet (no frame, no
// byte, no event half received) before its replay counts as complete when
// nothing else says it is: maria sends no marker between the replayed log
// and live events.
const Settle = 600 * time.Millisecond

// SettleQuick is the quiet window when the evidence is strong: the daemon
// says the task is idle or stopped (asked while the stream starts) and the
// last frame received ends a run. maria writes a replay from memory in one
// loop, so a replay that reached the run's end and then fell silent, with
// no byte arriving and no event half received or still on its way to the
// consumer, is complete; a later run would begin after the daemon said
// idle and would be live, not replay. SettleConfirm is a second look after
// the window, so that bytes the kernel already holds (the process may have
// been descheduled for the whole window) are read before the replay counts
// as in.
const (
	SettleQuick   = 40 * time.Millisecond
	SettleConfirm = 10 * time.Millisecond
)

// ReplayEnd decides when the replay of a task stream is in, the point where
// Follow sends an Update with Synced. Follow feeds it everything the stream
// does, in order, from one goroutine, and asks Quiet after each step.
//
// The rule is its own type so that another one can replace the default
// without touching Follow: see Backend.ReplayEnd.
type ReplayEnd interface {
	// Connected: a connection opened; it replays the log from the start.
	Connected()
	// Decoded: one frame. kind is its event's kind as decoded, before
	// the decoder dropped what an earlier connection delivered; evs are
	// the events it brought after that (possibly none).
	Decoded(kind events.Kind, evs []events.Event)
	// Closed: the connection ended or could not open; clean is a clean
	// close by the server. True means this proves the replay was in.
	Closed(clean bool) bool
	// Quiet is how long the connected stream must now stay quiet for
	// the replay to count as in; 0 or less: quiet time proves nothing.
	// strict asks for strict quiet, looked at twice (SettleConfirm
	// apart): no byte within the window, no event half received, none
	// read whole and still on its way. Otherwise quiet only means no
	// byte within the window and no event half received.
	Quiet() (window time.Duration, strict bool)
}

// Waker is implemented by a ReplayEnd that learns things in the
// background (a status fetched in parallel): a receive on Wake makes
// Follow ask Quiet again, measuring it from now.
type Waker interface {
	Wake() <-chan struct{}
}

// StatusTaker is implemented by a ReplayEnd that weighs the daemon's word
// on the task: Follow hands it every status it asks for itself (FollowWith
// with UntilIdle), "" when the daemon could not be asked.
type StatusTaker interface {
	Status(status string)
}

// Stopper is implemented by a ReplayEnd with work of its own in the
// background: Follow calls Stop after its context ended, and Stop returns
// once that work is over.
type Stopper interface {
	Stop()
}

// QuietEnd is the rule for when nothing is known about the task: the
// replay is in once the connected stream stayed quiet for a fixed time,
// or — behind a server or proxy that closes the stream after each replay —
// once a clean close follows a whole replay, itself after a clean close,
// that brought nothing new.
type QuietEnd struct {
	// Window is the quiet time (0: Settle).
	Window time.Duration

	seenAny    bool // some connection brought something new
	connNew    bool // this connection did (or is the first one)
	live       bool // connected now
	cleanClose bool // the last connection ended with a clean close
}

// NewQuietEnd returns the fixed rule with a quiet window (0: Settle).
func NewQuietEnd(window time.Duration) *QuietEnd { return &QuietEnd{Window: window} }

// Connected implements ReplayEnd.
func (q *QuietEnd) Connected() {
	q.live = true
	// An empty first replay must not look like "nothing new".
	q.connNew = !q.seenAny
}

// Decoded implements ReplayEnd. A queue snapshot is a state replayed with
// the log each time, so it is no news by itself.
func (q *QuietEnd) Decoded(_ events.Kind, evs []events.Event) {
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

// Quiet implements ReplayEnd: never strict.
func (q *QuietEnd) Quiet() (time.Duration, bool) {
	if q.Window > 0 {
		return q.Window, false
	}
	return Settle, false
}

// EvidenceEnd is Follow's default rule: QuietEnd, except that strong
// evidence shortens the wait. It asks the daemon for the task's status
// while the stream starts; when the daemon says idle or stopped and the
// last frame of the connection ends a run (PostConversation, Cancelled,
// Failed) that leaves the run over, SettleQuick of strict quiet, looked
// at twice, suffices. Everything else waits for the long window: a task
// the daemon says is generating, a replay that stops mid-run, a status
// that could not be fetched. A daemon that pauses inside an event, or
// between events before the run's end, cannot end a replay early.
//
// What remains possible: an idle task whose log holds several runs, and
// a daemon that stalls for more than SettleQuick right after one of the
// earlier runs' ends. maria writes a replay from memory in one loop, so
// this would take a stall of the daemon itself.
type EvidenceEnd struct {
	QuietEnd
	// Quick is the short window (0: SettleQuick).
	Quick time.Duration

	mu          sync.Mutex
	daemonQuiet bool // the daemon's last word: idle or stopped

	runEnd     bool // the connection's last frame ends a run
	generating bool // the last run start or end delivered was a start
	wake       chan struct{}
	done       chan struct{}
}

// Evidence returns a Backend.ReplayEnd factory of EvidenceEnd rules with
// the given windows (0: Settle and SettleQuick).
func Evidence(long, quick time.Duration) func(context.Context, *Client, string) ReplayEnd {
	return func(ctx context.Context, cl *Client, id string) ReplayEnd {
		return NewEvidenceEnd(ctx, cl, id, long, quick)
	}
}

// NewEvidenceEnd returns the rule for task id and asks cl for the task's
// status in the background, until ctx ends (call Stop to wait for it).
// cl may be nil: then the daemon is never asked and the rule is QuietEnd.
func NewEvidenceEnd(ctx context.Context, cl *Client, id string, long, quick time.Duration) *EvidenceEnd {
	e := &EvidenceEnd{QuietEnd: QuietEnd{Window: long}, Quick: quick,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	if cl == nil {
		close(e.done)
		return e
	}
	go func() {
		defer close(e.done)
		// The daemon's view of the task, asked while the stream starts:
		// a task resolved before may be a moment older than the
		// connection.
		t, err := cl.Task(ctx, id)
		if err != nil {
			return
		}
		e.Status(t.Status)
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}()
	return e
}

// Connected implements ReplayEnd.
func (e *EvidenceEnd) Connected() {
	e.QuietEnd.Connected()
	e.runEnd = false
}

// Decoded implements ReplayEnd.
func (e *EvidenceEnd) Decoded(kind events.Kind, evs []events.Event) {
	e.QuietEnd.Decoded(kind, evs)
	switch kind {
	case events.KindPostConversation, events.KindCancelled, events.KindFailed:
		e.runEnd = true
	default:
		e.runEnd = false
	}
	for i := range evs {
		switch evs[i].Kind {
		case events.KindPreConversation:
			e.generating = true
		case events.KindPostConversation, events.KindCancelled, events.KindFailed:
			e.generating = false
		}
	}
}

// Status implements StatusTaker.
func (e *EvidenceEnd) Status(s string) {
	e.mu.Lock()
	e.daemonQuiet = s == events.StatusIdle || s == events.StatusStopped
	e.mu.Unlock()
}

// Quiet implements ReplayEnd. The run's end must be the connection's last
// frame and leave the delivered timeline's run over: a reconnect that
// replays an old run's end while later events were delivered before is no
// evidence. (A timeline whose task is stopped is never generating; this
// rule then takes the long window, the safe side.)
func (e *EvidenceEnd) Quiet() (time.Duration, bool) {
	e.mu.Lock()
	quiet := e.daemonQuiet
	e.mu.Unlock()
	if quiet && e.runEnd && !e.generating {
		if e.Quick > 0 {
			return e.Quick, true
		}
		return SettleQuick, true
	}
	return e.QuietEnd.Quiet()
}

// Wake implements Waker: the status came.
func (e *EvidenceEnd) Wake() <-chan struct{} { return e.wake }

// Stop implements Stopper.
func (e *EvidenceEnd) Stop() { <-e.done }
