// Package maria is the outbox's backend for the maria daemon: it sends
// through the daemon's HTTP API and answers "did this text arrive?" from
// the task's event replay, which holds every user message and the queue.
//
// It is outbox/live's adapter specialised to a maria client: the same
// count (live.Count) over the same replay, ended by maria's quiet window
// (maria sends no end-of-replay marker) where a live backend says Synced.
// A maria backend.Backend that classifies its Send errors with Classify
// and marks Synced by the same rule makes live.New(it) equivalent; this
// package stays for callers that hold a *maria.Client.
package maria

import (
	"context"
	"fmt"
	"time"

	"github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/outbox/live"
	"github.com/perch-tui/perch/sse"
)

// Settle is how long a task stream must stay quiet before its replay
// counts as complete (maria sends no end-of-replay marker).
const Settle = 600 * time.Millisecond

// replayTimeout bounds one Received check.
const replayTimeout = 60 * time.Second

// Backend implements outbox.Backend with a maria maria.
type Backend struct {
	Client *maria.Client
	// Settle overrides the quiet time that ends a replay (0: Settle).
	Settle time.Duration
}

// New returns the backend of a maria.
func New(cl *maria.Client) *Backend { return &Backend{Client: cl} }

// Send implements outbox.Backend: POST …/message, with the error
// classified (see Classify).
func (b *Backend) Send(ctx context.Context, task string, m outbox.Message) (outbox.Receipt, error) {
	res, err := b.Client.Send(ctx, task, m.Text, m.WebSearch)
	if err != nil {
		return outbox.Receipt{}, Classify(err)
	}
	return outbox.Receipt{ID: res.ID, Queued: res.Queued}, nil
}

// Classify marks a client error for the outbox (see maria.Classify).
func Classify(err error) error { return maria.Classify(err) }

// Received implements outbox.Backend from one replay of the task's event
// stream: user messages with that exact text created at or after since
// (or with no time), plus queued messages with that text.
func (b *Backend) Received(ctx context.Context, task, text string, since time.Time) (int, error) {
	tl, err := b.Replay(ctx, task)
	if err != nil {
		return 0, err
	}
	return live.Count(tl, text, since), nil
}

type streamMsg struct {
	frame *events.Frame
	state *sse.ConnState
}

// Replay follows the task's event stream until it has been quiet for
// Settle while connected, and returns the timeline it built. A stream that
// breaks or can't connect is an error: the check is tried again later.
func (b *Backend) Replay(ctx context.Context, task string) (*events.Timeline, error) {
	settle := b.Settle
	if settle <= 0 {
		settle = Settle
	}
	ctx, cancel := context.WithTimeout(ctx, replayTimeout)
	defer cancel()
	ch := make(chan streamMsg, 256)
	errc := make(chan error, 1)
	go func() {
		errc <- b.Client.StreamTask(ctx, task,
			func(f events.Frame) {
				select {
				case ch <- streamMsg{frame: &f}:
				case <-ctx.Done():
				}
			},
			func(s sse.ConnState) {
				select {
				case ch <- streamMsg{state: &s}:
				case <-ctx.Done():
				}
			})
	}()
	stop := func() { cancel(); <-errc }
	tl := events.NewTimeline()
	dec := maria.NewDecoder()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	timer.Stop()
	live := false
	for {
		select {
		case m := <-ch:
			if s := m.state; s != nil {
				switch s.Phase {
				case sse.PhaseLive:
					dec.Reconnected()
					live = true
					timer.Reset(settle)
				case sse.PhaseReconnecting:
					stop()
					return nil, fmt.Errorf("the event stream of task %s broke: %v", task, s.Err)
				}
				continue
			}
			for _, ev := range dec.Decode(*m.frame) {
				tl.Apply(ev)
			}
			if live {
				timer.Reset(settle)
			}
		case <-timer.C:
			stop()
			return tl, nil
		case err := <-errc:
			if err == nil {
				err = fmt.Errorf("the event stream of task %s ended", task)
			}
			if ctx.Err() != nil && err == ctx.Err() {
				err = fmt.Errorf("replaying task %s: %w", task, err)
			}
			return nil, err
		}
	}
}
