package client

import (
	"context"
	"fmt"
	"time"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// SessionStateWatcher is a SessionWatcher that also reports the state of
// the connection it watches through (maria's daemon stream), which a view
// of the list (the TUI's task list) shows.
type SessionStateWatcher interface {
	WatchSessionsState(ctx context.Context, on func([]events.Task), onState func(ConnState)) error
}

// WatchSessions keeps a view's list of b's sessions live until ctx ends:
// on gets the whole list each time it changes, onState the state of the
// watch. It uses the backend's own watch where it has one
// (SessionStateWatcher, else SessionWatcher), and otherwise asks Sessions
// every `every`, handing the list on only when it changed; a failed ask
// shows as reconnecting until the next answer. It returns ctx.Err() once
// ctx ends, or the watch's error.
func WatchSessions(ctx context.Context, b Backend, every time.Duration, on func([]events.Task), onState func(ConnState)) error {
	var err error
	switch w := b.(type) {
	case SessionStateWatcher:
		err = w.WatchSessionsState(ctx, on, onState)
	case SessionWatcher:
		onState(ConnState{Phase: sse.PhaseConnecting, Since: time.Now()})
		first := true
		err = w.WatchSessions(ctx, func(ts []events.Task) {
			if first {
				first = false
				onState(ConnState{Phase: sse.PhaseLive, Since: time.Now()})
			}
			on(ts)
		})
	default:
		return pollSessions(ctx, b, every, on, onState)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// pollSessions is WatchSessions for a backend that cannot watch its list.
func pollSessions(ctx context.Context, b Backend, every time.Duration, on func([]events.Task), onState func(ConnState)) error {
	onState(ConnState{Phase: sse.PhaseConnecting, Since: time.Now()})
	var last []events.Task
	live, attempt := false, 0
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		ts, err := b.Sessions(cctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			attempt++
			live = false
			onState(ConnState{Phase: sse.PhaseReconnecting, Attempt: attempt, RetryIn: every,
				Err: fmt.Errorf("listing the sessions of %s: %w", b.URL(), err), Since: time.Now()})
		default:
			if !live {
				live, attempt = true, 0
				onState(ConnState{Phase: sse.PhaseLive, Since: time.Now()})
			}
			if ts == nil {
				ts = []events.Task{}
			}
			if last == nil || !events.EqualTasks(last, ts) {
				last = ts
				on(ts)
			}
		}
		t.Reset(every)
	}
}
