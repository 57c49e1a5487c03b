package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// WatchEvery is how often a Driver looks at a store that can only be
// polled for changes made by others (FileStore.Watch).
const WatchEvery = 300 * time.Millisecond

// Watcher is a Store that reports changes to a task's queue made by
// anyone (FileStore: by any process; MemStore: by any goroutine). The
// channel gets a signal per change (changes may coalesce) and is closed
// once ctx ends.
type Watcher interface {
	Watch(ctx context.Context, task string, every time.Duration) <-chan struct{}
}

// Driver runs Pace for one session, for callers without a UI (a command
// that waits, a test): it follows the session through the Deliverer's
// backend, watches the store for changes by anyone (a pause lifted by
// perch queue --resume), and makes the calls Pace asks for.
type Driver struct {
	Deliverer *Deliverer
	// Pace is the rule; nil means NewPace of the backend's capabilities.
	Pace *Pace
	// OnResult, when set, hears every delivery attempt, on Run's
	// goroutine.
	OnResult func(Result, error)
}

// inbox passes Follow's updates to Run without ever blocking Follow.
type inbox struct {
	mu     sync.Mutex
	ups    []client.Update
	signal chan struct{}
}

func (b *inbox) put(u client.Update) {
	b.mu.Lock()
	b.ups = append(b.ups, u)
	b.mu.Unlock()
	select {
	case b.signal <- struct{}{}:
	default:
	}
}

func (b *inbox) take() []client.Update {
	b.mu.Lock()
	defer b.mu.Unlock()
	ups := b.ups
	b.ups = nil
	return ups
}

// Run delivers the session's messages until ctx ends (it returns
// ctx.Err()), or, with untilEmpty, until nothing is left that Next(Idle)
// would deliver (nil). It returns an error when following the session
// fails for good, or the outbox cannot be read.
func (dr *Driver) Run(ctx context.Context, session string, untilEmpty bool) error {
	d := dr.Deliverer
	be := d.Backend
	p := dr.Pace
	if p == nil {
		p = NewPace(be.Capabilities())
	}
	q, err := d.Store.Load(session)
	if err != nil {
		return err
	}
	if untilEmpty && !dueOnIdle(q) {
		return nil
	}
	p.Queue(q)

	ctx, cancel := context.WithCancel(ctx)
	in := &inbox{signal: make(chan struct{}, 1)}
	errc := make(chan error, 1)
	go func() { errc <- be.Follow(ctx, session, in.put) }()
	var changed <-chan struct{}
	if w, ok := d.Store.(Watcher); ok {
		changed = w.Watch(ctx, session, WatchEvery)
	}
	followDone := false
	defer func() {
		cancel()
		if !followDone {
			<-errc
		}
		for range changed { // closed once the watch ended
		}
	}()

	tl := events.NewTimeline()
	ready := false // the history is in since the last break
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		reload := false
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
			return fmt.Errorf("following session %s at %s: %w", session, be.URL(), err)
		case <-in.signal:
			for _, u := range in.take() {
				if s := u.State; s != nil && s.Phase != sse.PhaseLive {
					ready = false
				}
				if u.Reset {
					tl = events.NewTimeline()
				}
				for _, ev := range u.Events {
					tl.Apply(ev)
					p.Event(ev, tl.Status())
				}
				if u.Synced {
					ready = true
				}
			}
		case _, ok := <-changed:
			if !ok {
				changed = nil
			}
			reload = true
		case <-timer.C:
		}
		if reload {
			if q, err = d.Store.Load(session); err != nil {
				return err
			}
			p.Queue(q)
		}
		p.Session(time.Now(), ready, tl.Status())
		var next time.Time
		for {
			var act Action
			act, next = p.Step(time.Now())
			if act == ActNone {
				break
			}
			var rs []Result
			var err error
			switch act {
			case ActNext:
				var r Result
				r, err = d.Next(ctx, session, Idle)
				if r.Message.ID != "" {
					rs = []Result{r}
				}
				if dr.OnResult != nil {
					dr.OnResult(r, err)
				}
			case ActFlush:
				rs, err = d.Flush(ctx, session)
				if dr.OnResult != nil {
					for _, r := range rs {
						dr.OnResult(r, err)
					}
				}
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			p.Done(time.Now(), act, rs, err)
			if q, err = d.Store.Load(session); err != nil {
				return err
			}
			p.Queue(q)
			if untilEmpty && !dueOnIdle(q) {
				return nil
			}
		}
		timer.Stop()
		if !next.IsZero() {
			timer.Reset(max(time.Until(next), 0))
		}
	}
}

// dueOnIdle: q has a message Next(Idle) would deliver or resolve.
func dueOnIdle(q *Queue) bool {
	if _, ok := q.Next(Idle); ok {
		return true
	}
	for _, m := range q.pending {
		if m.State == Sending {
			return true
		}
	}
	return false
}
