package live

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/sse"
)

// Defaults of a Driver, the same rule the terminal UI follows.
const (
	// DefaultSettle: how long a session must stay idle, its history in,
	// before a held message goes (a replay passes through idle often).
	DefaultSettle = 700 * time.Millisecond
	// DefaultTurnWait: how long to wait for the run a message started to
	// show (running, or its message then an end of run) before the next
	// message may go anyway; also how long a failed or busy attempt waits
	// before the next try when nothing else happens.
	DefaultTurnWait = 30 * time.Second
)

// Driver delivers one session's held messages when it is idle, as an
// attached perch does, for callers without a UI (a command that waits, a
// test): it follows the session and, each time the session has been idle
// for Settle with its history in, calls Deliverer.Next(Idle) once (the
// call that also ends the Deliverer's busy pause). A message that started
// a run is followed by the next only after that run was seen (the session
// running, or the message in the transcript and then an end of run) and
// the session is idle again, or after TurnWait if it never shows. So held
// follow-ups on a server without a queue start their runs one after
// another, each once.
type Driver struct {
	Deliverer *outbox.Deliverer
	Backend   backend.Backend
	// Settle and TurnWait override DefaultSettle and DefaultTurnWait.
	Settle, TurnWait time.Duration
	// OnResult, when set, hears every delivery attempt, on Run's
	// goroutine.
	OnResult func(outbox.Result, error)
}

// inbox passes Follow's updates to Run without ever blocking Follow.
type inbox struct {
	mu     sync.Mutex
	ups    []backend.Update
	signal chan struct{}
}

func (b *inbox) put(u backend.Update) {
	b.mu.Lock()
	b.ups = append(b.ups, u)
	b.mu.Unlock()
	select {
	case b.signal <- struct{}{}:
	default:
	}
}

func (b *inbox) take() []backend.Update {
	b.mu.Lock()
	defer b.mu.Unlock()
	ups := b.ups
	b.ups = nil
	return ups
}

// wait is what must happen before the next attempt.
type wait struct {
	on       bool
	text     string    // a message that started a run: wait for that run
	userSeen bool      // its user message is in the transcript
	until    time.Time // try again anyway then
}

// Run delivers the session's held messages until ctx ends (it returns
// ctx.Err()), or, with untilEmpty, until nothing is due on idle (nil). It
// returns an error when following the session fails for good, or the
// outbox cannot be read.
func (dr *Driver) Run(ctx context.Context, session string, untilEmpty bool) error {
	settle, turnWait := dr.Settle, dr.TurnWait
	if settle <= 0 {
		settle = DefaultSettle
	}
	if turnWait <= 0 {
		turnWait = DefaultTurnWait
	}
	if untilEmpty {
		if due, err := dr.due(session); err != nil || !due {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	in := &inbox{signal: make(chan struct{}, 1)}
	errc := make(chan error, 1)
	go func() { errc <- dr.Backend.Follow(ctx, session, in.put) }()
	followDone := false
	defer func() {
		cancel()
		if !followDone {
			<-errc
		}
	}()

	var (
		tl     = events.NewTimeline()
		ready  bool      // the history is in since the last break
		idleAt time.Time // when the session was last seen turning idle
		w      wait
		timer  = time.NewTimer(time.Hour)
	)
	defer timer.Stop()
	apply := func(u backend.Update) {
		if s := u.State; s != nil && s.Phase != sse.PhaseLive {
			ready = false
		}
		if u.Reset {
			tl = events.NewTimeline()
		}
		for _, ev := range u.Events {
			tl.Apply(ev)
			if !w.on {
				continue
			}
			switch {
			case tl.Status() == events.RunGenerating:
				w = wait{} // a run is seen: the next idle is a fresh one
			case w.text != "" && ev.Kind == events.KindUserMessage && ev.Text == w.text:
				w.userSeen = true
			case w.userSeen && runEnd(ev):
				w = wait{} // its run started and ended between two looks
			}
		}
		if u.Synced {
			if !ready && w.on && w.text == "" {
				w = wait{} // reconnected: what failed may work now
			}
			ready = true
		}
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errc:
			followDone = true
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err == nil {
				err = errors.New("the stream ended")
			}
			return fmt.Errorf("following session %s at %s: %w", session, dr.Backend.URL(), err)
		case <-in.signal:
			for _, u := range in.take() {
				apply(u)
			}
		case <-timer.C:
		}
		now := time.Now()
		if w.on && !now.Before(w.until) {
			w = wait{}
		}
		idle := ready && dr.idle(tl.Status())
		switch {
		case !idle:
			idleAt = time.Time{}
		case idleAt.IsZero():
			idleAt = now
		}
		var next time.Time // when to look again without news
		switch {
		case w.on:
			next = w.until
		case idle && now.Sub(idleAt) >= settle:
			r, err := dr.Deliverer.Next(ctx, session, outbox.Idle)
			if dr.OnResult != nil {
				dr.OnResult(r, err)
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if r.Message.ID == "" && err == nil && untilEmpty {
				return nil
			}
			w = wait{on: true, until: time.Now().Add(turnWait)}
			if r.Delivered && !r.Message.Queued && !r.Message.Recovered {
				w.text = r.Message.Text
			}
			idleAt = time.Time{}
			next = w.until
		case idle:
			next = idleAt.Add(settle)
		}
		timer.Stop()
		if !next.IsZero() {
			timer.Reset(max(time.Until(next), 0))
		}
	}
}

// idle: the status in which held messages may go. A stopped maria task
// has no process and is not restarted behind the user's back; on the
// other systems a stopped run is just a run that ended.
func (dr *Driver) idle(s events.RunStatus) bool {
	switch s {
	case events.RunIdle:
		return true
	case events.RunStopped:
		return !dr.Backend.Capabilities().ServerQueue
	}
	return false
}

// runEnd: an event that ends a run.
func runEnd(ev events.Event) bool {
	switch ev.Kind {
	case events.KindPostConversation, events.KindCancelled, events.KindFailed:
		return true
	case events.KindRunState:
		return ev.RunStatus != events.StatusGenerating
	}
	return false
}

// due: the session's outbox has a message Next(Idle) would deliver or
// resolve.
func (dr *Driver) due(session string) (bool, error) {
	q, err := dr.Deliverer.Store.Load(session)
	if err != nil {
		return false, err
	}
	if _, ok := q.Next(outbox.Idle); ok {
		return true, nil
	}
	for _, m := range q.Pending() {
		if m.State == outbox.Sending {
			return true, nil
		}
	}
	return false, nil
}
