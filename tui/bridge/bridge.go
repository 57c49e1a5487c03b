// Package bridge shows any live backend (backend.Backend: Suna, pynchy,
// maria) in the terminal UI: it is the tui.Backend, tui.Capable and
// tui.EventStreamer of a backend.Backend.
//
//   - A session's updates (Follow) become the UI's decoded events; a
//     Reset becomes tui.ResetEvent, so the UI starts the timeline over.
//   - The session list is the backend's own watch where it has one
//     (backend.SessionWatcher), else Sessions polled every PollEvery.
//   - Capabilities map one to one: no cancel key where the backend cannot
//     cancel (pynchy), no composer without Send, no new-task key without
//     Create. The backend's name shows in the status bars.
//
// maria keeps its own path (*client.Client reads the raw daemon streams);
// the bridge works for it too, and its tests use it as a reference.
package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
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
	_ tui.Backend       = (*Bridge)(nil)
	_ tui.Capable       = (*Bridge)(nil)
	_ tui.EventStreamer = (*Bridge)(nil)
)

// New returns the UI's view of b.
func New(b backend.Backend) *Bridge { return &Bridge{b: b, pollEvery: PollEvery} }

// Capabilities implements tui.Capable.
func (br *Bridge) Capabilities() tui.Capabilities {
	c := br.b.Capabilities()
	out := tui.Capabilities{Send: c.Send, Cancel: c.Cancel, Create: c.Create, WebSearch: c.WebSearch, Backend: br.b.Name()}
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
func (br *Bridge) CreateTask(ctx context.Context, req client.CreateTaskRequest) (client.CreateTaskResult, error) {
	t, err := br.b.Create(ctx, backend.CreateRequest{Name: req.Name, Model: req.Model, Cwd: req.Cwd,
		Prompt: req.Message, WebSearch: req.WebSearch})
	if err != nil {
		return client.CreateTaskResult{}, err
	}
	return client.CreateTaskResult{Task: t}, nil
}

// Send implements tui.Backend. The UI delivers through its outbox (the
// backend's outbox adapter, outbox/live); this is its fallback.
func (br *Bridge) Send(ctx context.Context, taskID, text string, webSearch bool) (client.SendResult, error) {
	r, err := br.b.Send(ctx, taskID, backend.Message{Text: text, WebSearch: webSearch})
	return client.SendResult{ID: r.ID, Queued: r.Queued}, err
}

// Cancel implements tui.Backend.
func (br *Bridge) Cancel(ctx context.Context, taskID string) ([]events.QueuedMessage, error) {
	return br.b.Cancel(ctx, taskID)
}

// StreamTask implements tui.Backend; the UI uses StreamTaskEvents.
func (br *Bridge) StreamTask(context.Context, string, func(events.Frame), func(client.ConnState)) error {
	return errors.New("bridge: the task stream comes decoded (StreamTaskEvents)")
}

// StreamTaskEvents implements tui.EventStreamer with Follow.
func (br *Bridge) StreamTaskEvents(ctx context.Context, taskID string, onEvent func(events.Event), onState func(client.ConnState)) error {
	return br.b.Follow(ctx, taskID, func(u backend.Update) {
		if u.Reset {
			onEvent(tui.ResetEvent())
		}
		for _, ev := range u.Events {
			onEvent(ev)
		}
		switch {
		case u.State != nil:
			onState(*u.State)
		case u.Synced:
			// Everything the server had is in: the session is followed
			// live, whatever the last connection did (Suna's run stream
			// closes when the run ends, and the thread is then followed
			// through its REST routes until the next run).
			onState(client.ConnState{Phase: client.PhaseLive, Since: time.Now()})
		}
	})
}

// StreamDaemon implements tui.Backend: the session list, as the frames
// the UI reads from maria's daemon stream (daemon.tasks.synchronized, the
// whole list each time).
func (br *Bridge) StreamDaemon(ctx context.Context, onFrame func(events.Frame), onState func(client.ConnState)) error {
	send := func(ts []events.Task) {
		f, err := tasksFrame(ts)
		if err == nil {
			onFrame(f)
		}
	}
	if w, ok := br.b.(backend.SessionWatcher); ok {
		onState(client.ConnState{Phase: client.PhaseConnecting, Since: time.Now()})
		first := true
		err := w.WatchSessions(ctx, func(ts []events.Task) {
			if first {
				first = false
				onState(client.ConnState{Phase: client.PhaseLive, Since: time.Now()})
			}
			send(ts)
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return br.poll(ctx, send, onState)
}

// poll asks for the session list every pollEvery and hands it on when it
// changed. A failure shows as a reconnecting state until the next answer.
func (br *Bridge) poll(ctx context.Context, send func([]events.Task), onState func(client.ConnState)) error {
	every := br.pollEvery
	if every <= 0 {
		every = PollEvery
	}
	onState(client.ConnState{Phase: client.PhaseConnecting, Since: time.Now()})
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
			onState(client.ConnState{Phase: client.PhaseReconnecting, Attempt: attempt, RetryIn: every,
				Err: fmt.Errorf("listing the sessions of %s: %w", br.b.URL(), err), Since: time.Now()})
		default:
			if !live {
				live, attempt = true, 0
				onState(client.ConnState{Phase: client.PhaseLive, Since: time.Now()})
			}
			if last == nil || !reflect.DeepEqual(last, ts) {
				last = ts
				if last == nil {
					last = []events.Task{}
				}
				send(ts)
			}
		}
		t.Reset(every)
	}
}

// wireTask is a task as maria's daemon sends it (docs/protocol.md), the
// shape events.ParseTasks reads.
type wireTask struct {
	ID        string  `json:"id"`
	Name      *string `json:"name"`
	Cwd       string  `json:"cwd,omitempty"`
	Status    string  `json:"status,omitempty"`
	Created   int64   `json:"created,omitempty"`
	Updated   int64   `json:"updated,omitempty"`
	WebSearch bool    `json:"web_search,omitempty"`
	Model     string  `json:"model,omitempty"`
}

// tasksFrame encodes a session list as a daemon.tasks.synchronized frame.
// Queued messages stay out: the attached session's queue comes with its
// events.
func tasksFrame(ts []events.Task) (events.Frame, error) {
	ws := make([]wireTask, 0, len(ts))
	for _, t := range ts {
		if t.ID == "" {
			continue
		}
		name := t.Name
		w := wireTask{ID: t.ID, Name: &name, Cwd: t.Cwd, Status: t.Status, WebSearch: t.WebSearch, Model: t.Model}
		if !t.Created.IsZero() {
			w.Created = t.Created.UnixMilli()
		}
		if !t.Updated.IsZero() {
			w.Updated = t.Updated.UnixMilli()
		}
		ws = append(ws, w)
	}
	data, err := json.Marshal(struct {
		Tasks []wireTask `json:"tasks"`
	}{ws})
	if err != nil {
		return events.Frame{}, err
	}
	return events.Frame{Name: "daemon.tasks.synchronized", Data: data}, nil
}
