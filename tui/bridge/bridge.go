// Package bridge shows a live backend (backend.Backend: maria, Suna,
// pynchy) in the terminal UI: it is the tui.Backend and tui.Capable of a
// backend.Backend, so the UI receives decoded, ordered events from every
// system and knows of each only what its capabilities say.
//
//   - A session's updates (Follow) become the UI's decoded events; a
//     Reset becomes tui.ResetEvent, so the UI starts the timeline over.
//     States pass through; Synced says live. Each update's Backlog goes
//     with its events (tui.HintedStreamer), so the UI holds a replay's
//     batch while more is on its way and draws the last one at once.
//   - The session list is the backend's own watch where it has one
//     (StateWatcher, with its connection's state: maria's daemon stream;
//     backend.SessionWatcher), else Sessions polled every PollEvery.
//   - Capabilities map one to one: no cancel key where the backend cannot
//     cancel (pynchy), no composer without Send, no new-task key without
//     Create, no web search toggle without WebSearch. The backend's name
//     shows in the status bars, except maria's: it is perch's own daemon,
//     shown as it always was.
package bridge

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/tui"
)

// PollEvery is how often the session list of a backend that cannot watch
// it is asked again.
const PollEvery = 3 * time.Second

// Bridge adapts a backend.Backend to the terminal UI.
type Bridge struct {
	b backend.Backend
	// pollEvery overrides PollEvery (tests).
	pollEvery time.Duration
}

var (
	_ tui.Backend        = (*Bridge)(nil)
	_ tui.Capable        = (*Bridge)(nil)
	_ tui.HintedStreamer = (*Bridge)(nil)
)

// New returns the UI's view of b.
func New(b backend.Backend) *Bridge { return &Bridge{b: b, pollEvery: PollEvery} }

// Capabilities implements tui.Capable.
func (br *Bridge) Capabilities() tui.Capabilities {
	c := br.b.Capabilities()
	out := tui.Capabilities{Send: c.Send, Cancel: c.Cancel, Create: c.Create, WebSearch: c.WebSearch, Backend: br.b.Name()}
	if out.Backend == backend.Maria {
		out.Backend = ""
	}
	if !c.Send {
		out.Note = br.b.Name() + " at " + br.b.URL() + " takes no follow-ups from perch — read-only"
	}
	return out
}

// Tasks implements tui.Backend: the backend's sessions.
func (br *Bridge) Tasks(ctx context.Context) ([]events.Task, error) { return br.b.Sessions(ctx) }

// Task implements tui.Backend.
func (br *Bridge) Task(ctx context.Context, id string) (events.Task, error) {
	return br.b.Session(ctx, id)
}

// CreateTask implements tui.Backend.
func (br *Bridge) CreateTask(ctx context.Context, req maria.CreateTaskRequest) (maria.CreateTaskResult, error) {
	t, err := br.b.Create(ctx, backend.CreateRequest{Name: req.Name, Model: req.Model, Cwd: req.Cwd,
		Prompt: req.Message, WebSearch: req.WebSearch})
	if err != nil {
		return maria.CreateTaskResult{}, err
	}
	return maria.CreateTaskResult{Task: t}, nil
}

// Send implements tui.Backend. The UI delivers through its outbox (an
// outbox.Deliverer over the backend itself); this is its fallback.
func (br *Bridge) Send(ctx context.Context, taskID, text string, webSearch bool) (maria.SendResult, error) {
	r, err := br.b.Send(ctx, taskID, backend.Message{Text: text, WebSearch: webSearch})
	return maria.SendResult{ID: r.ID, Queued: r.Queued}, err
}

// Cancel implements tui.Backend.
func (br *Bridge) Cancel(ctx context.Context, taskID string) ([]events.QueuedMessage, error) {
	return br.b.Cancel(ctx, taskID)
}

// StreamTaskEvents implements tui.Backend with Follow.
func (br *Bridge) StreamTaskEvents(ctx context.Context, taskID string, onEvent func(events.Event), onState func(sse.ConnState)) error {
	return br.StreamTaskSteps(ctx, taskID, func(evs []events.Event, _ backend.Backlog) {
		for _, ev := range evs {
			onEvent(ev)
		}
	}, onState)
}

// StreamTaskSteps implements tui.HintedStreamer with Follow: each update
// with events or a Backlog is one step, with the update's Backlog
// (BacklogUnknown from a backend that does not tell, which leaves the UI
// its timing rule).
func (br *Bridge) StreamTaskSteps(ctx context.Context, taskID string, onStep func([]events.Event, backend.Backlog), onState func(sse.ConnState)) error {
	live := false
	return br.b.Follow(ctx, taskID, func(u backend.Update) {
		evs := u.Events
		if u.Reset {
			evs = append([]events.Event{tui.ResetEvent()}, evs...)
		}
		if len(evs) > 0 || u.Backlog != backend.BacklogUnknown {
			onStep(evs, u.Backlog)
		}
		switch {
		case u.State != nil:
			live = u.State.Phase == sse.PhaseLive
			onState(*u.State)
		case u.Synced && !live:
			// Everything the server had is in: the session is followed
			// live, whatever the last connection did (Suna's run stream
			// closes when the run ends, and the thread is then followed
			// through its REST routes until the next run).
			live = true
			onState(sse.ConnState{Phase: sse.PhaseLive, Since: time.Now()})
		}
	})
}

// StateWatcher is a backend.SessionWatcher that also reports the state
// of the connection it watches through (maria's daemon stream), which the
// task list's status bar shows.
type StateWatcher interface {
	WatchSessionsState(ctx context.Context, on func([]events.Task), onState func(backend.ConnState)) error
}

// WatchTasks implements tui.Backend: the backend's own watch of its
// sessions where it has one, else Sessions polled every pollEvery.
func (br *Bridge) WatchTasks(ctx context.Context, onTasks func([]events.Task), onState func(sse.ConnState)) error {
	if w, ok := br.b.(StateWatcher); ok {
		err := w.WatchSessionsState(ctx, onTasks, onState)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if w, ok := br.b.(backend.SessionWatcher); ok {
		onState(sse.ConnState{Phase: sse.PhaseConnecting, Since: time.Now()})
		first := true
		err := w.WatchSessions(ctx, func(ts []events.Task) {
			if first {
				first = false
				onState(sse.ConnState{Phase: sse.PhaseLive, Since: time.Now()})
			}
			onTasks(ts)
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return br.poll(ctx, onTasks, onState)
}

// poll asks for the session list every pollEvery and hands it on when it
// changed. A failure shows as a reconnecting state until the next answer.
func (br *Bridge) poll(ctx context.Context, send func([]events.Task), onState func(sse.ConnState)) error {
	every := br.pollEvery
	if every <= 0 {
		every = PollEvery
	}
	onState(sse.ConnState{Phase: sse.PhaseConnecting, Since: time.Now()})
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
		ts, err := br.b.Sessions(cctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			attempt++
			live = false
			onState(sse.ConnState{Phase: sse.PhaseReconnecting, Attempt: attempt, RetryIn: every,
				Err: fmt.Errorf("listing the sessions of %s: %w", br.b.URL(), err), Since: time.Now()})
		default:
			if !live {
				live, attempt = true, 0
				onState(sse.ConnState{Phase: sse.PhaseLive, Since: time.Now()})
			}
			if ts == nil {
				ts = []events.Task{}
			}
			if last == nil || !reflect.DeepEqual(last, ts) {
				last = ts
				send(ts)
			}
		}
		t.Reset(every)
	}
}
