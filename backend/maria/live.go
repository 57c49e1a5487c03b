package maria

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	mariaout "github.com/perch-tui/perch/outbox/maria"
)

// Backend is maria as a live backend: a client.Client behind the
// backend.Backend interface. Its Follow decodes the task stream with
// maria's decoder (which drops what each reconnect replays) and says when
// the replay is in.
type Backend struct {
	cl *client.Client
	// ReplayEnd makes, for each Follow, the rule that says when its
	// replay is in; nil means NewQuietEnd(0), the fixed quiet window. ctx
	// ends with the Follow (for work the rule does in the background,
	// such as asking the daemon for the task's status with cl).
	ReplayEnd func(ctx context.Context, cl *client.Client, sessionID string) ReplayEnd
}

var (
	_ backend.Backend        = (*Backend)(nil)
	_ backend.SessionWatcher = (*Backend)(nil)
)

// New wraps a client (built with whatever discovery and dialling options
// the caller needs).
func New(cl *client.Client) *Backend { return &Backend{cl: cl} }

// Open implements the registry's contract: a maria backend for cfg.URL
// (an http(s) URL ending in /v1), with cfg.Token sent as a bearer token.
func Open(cfg backend.Config) (backend.Backend, error) {
	b, err := OpenWith(cfg)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// OpenWith is Open with extra client options (the CLI's resolver and
// --header values, the loopback preference of a discovered URL).
func OpenWith(cfg backend.Config, opts ...client.Option) (*Backend, error) {
	cl, err := client.New(cfg.URL, append(ClientOptions(cfg), opts...)...)
	if err != nil {
		return nil, err
	}
	return New(cl), nil
}

// ClientOptions turns a backend.Config into client options: the token as
// an Authorization header (the client never prints header values) and
// the HTTP client when one is given.
func ClientOptions(cfg backend.Config) []client.Option {
	var opts []client.Option
	if cfg.Token != "" {
		h := http.Header{}
		h.Set("Authorization", "Bearer "+cfg.Token)
		opts = append(opts, client.WithHeaders(h))
	}
	if cfg.Client != nil {
		opts = append(opts, client.WithHTTPClient(cfg.Client))
	}
	return opts
}

// Probe reports whether cfg.URL answers as a maria daemon (nil) or not.
func Probe(ctx context.Context, cfg backend.Config) error { return ProbeWith(ctx, cfg) }

// ProbeWith is Probe with extra client options.
//
// The probe opens the daemon stream (GET /events) and reads its first
// frame: maria always starts it with a named event,
// daemon.tasks.synchronized, holding {"tasks":[…]} — a name no other
// server sends, and an answer that costs the daemon one task list. The
// stream is closed as soon as that frame (or anything else) arrives.
func ProbeWith(ctx context.Context, cfg backend.Config, opts ...client.Option) error {
	cl, err := client.New(cfg.URL, append(ClientOptions(cfg), opts...)...)
	if err != nil {
		return fmt.Errorf("not a maria daemon URL: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var verdict error
	decided := false
	err = cl.StreamDaemon(ctx, func(f events.Frame) {
		if decided {
			return
		}
		decided = true
		if !isTaskSync(f) {
			verdict = fmt.Errorf("%s/events: the first event is not maria's daemon.tasks.synchronized; not a maria daemon", cl.BaseURL())
		}
		cancel()
	}, func(s client.ConnState) {
		if decided || s.Phase != client.PhaseReconnecting {
			return
		}
		// A probe does not wait out a backoff: a broken or closed stream
		// is not a daemon's answer.
		decided = true
		verdict = fmt.Errorf("not a maria daemon: %w", s.Err)
		cancel()
	})
	if decided {
		return verdict
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s/events: no maria event in time: %w", cl.BaseURL(), err)
	}
	return fmt.Errorf("not a maria daemon: %w", err)
}

// isTaskSync: the frame is daemon.tasks.synchronized with a task list.
func isTaskSync(f events.Frame) bool {
	if f.Name != "daemon.tasks.synchronized" {
		return false
	}
	var w struct {
		Tasks *[]json.RawMessage `json:"tasks"`
	}
	return json.Unmarshal(f.Data, &w) == nil && w.Tasks != nil
}

// Client is the daemon client under the backend, for the views that
// still speak maria's API directly.
func (b *Backend) Client() *client.Client { return b.cl }

// Name implements backend.Backend.
func (b *Backend) Name() string { return backend.Maria }

// URL implements backend.Backend: the normalized base URL (…/v1). maria's
// URLs carry no query, so no token.
func (b *Backend) URL() string { return b.cl.BaseURL() }

// Capabilities implements backend.Backend: maria creates, sends, cancels
// and queues follow-ups itself. Its usage reports no cost.
func (b *Backend) Capabilities() backend.Capabilities {
	return backend.Capabilities{Create: true, Send: true, Cancel: true, ServerQueue: true, WebSearch: true}
}

// Sessions implements backend.Backend: the daemon's tasks, stopped ones
// included, in the daemon's order.
func (b *Backend) Sessions(ctx context.Context) ([]events.Task, error) { return b.cl.Tasks(ctx) }

// Session implements backend.Backend: the task is resolved from the list
// (id or unique prefix), then read again from GET /task/{id}, which the
// daemon answers with a running task's fresh status and queue (the list
// may lag) without resuming a stopped one.
func (b *Backend) Session(ctx context.Context, idOrPrefix string) (events.Task, error) {
	t, err := b.cl.ResolveTask(ctx, idOrPrefix)
	if err != nil {
		return events.Task{}, err
	}
	if fresh, err := b.cl.Task(ctx, t.ID); err == nil && fresh.ID == t.ID {
		return fresh, nil
	}
	return t, nil
}

// Send implements backend.Backend; errors are classified for the outbox
// (mariaout.Classify). maria queues a follow-up to a busy task itself.
func (b *Backend) Send(ctx context.Context, sessionID string, m backend.Message) (backend.SendResult, error) {
	res, err := b.cl.Send(ctx, sessionID, m.Text, m.WebSearch)
	if err != nil {
		return backend.SendResult{}, mariaout.Classify(err)
	}
	return backend.SendResult{ID: res.ID, Queued: res.Queued}, nil
}

// Cancel implements backend.Backend. When nothing runs the error
// satisfies errors.Is(err, client.ErrNotRunning).
func (b *Backend) Cancel(ctx context.Context, sessionID string) ([]events.QueuedMessage, error) {
	return b.cl.Cancel(ctx, sessionID)
}

// Create implements backend.Backend (it can take minutes: the daemon
// starts the task's process first).
func (b *Backend) Create(ctx context.Context, r backend.CreateRequest) (events.Task, error) {
	res, err := b.cl.CreateTask(ctx, client.CreateTaskRequest{Name: r.Name, Model: r.Model, Cwd: r.Cwd, Message: r.Prompt, WebSearch: r.WebSearch})
	if err != nil {
		return events.Task{}, err
	}
	return res.Task, nil
}

// streamItem is one step of the task stream, decoded on the stream's
// goroutine and handed to Follow's in order.
type streamItem struct {
	evs   []events.Event
	state *client.ConnState
}

// Follow implements backend.Backend. Every connection replays the task's
// whole log; the decoder drops what was delivered before, so each Update
// carries only new events. Synced is set once the replay is in, as the
// ReplayEnd rule decides (by default: quiet for Settle while connected,
// with no event half received; or a clean close after a replay that
// brought nothing new), at most once per connection.
func (b *Backend) Follow(ctx context.Context, sessionID string, on func(backend.Update)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan streamItem, 256)
	errc := make(chan error, 1)
	prog := &client.Progress{}
	dec := NewDecoder()
	send := func(it streamItem) {
		select {
		case ch <- it:
		case <-ctx.Done():
		}
	}
	go func() {
		errc <- b.cl.StreamTaskProgress(ctx, sessionID,
			func(f events.Frame) { send(streamItem{evs: dec.Decode(f)}) },
			func(s client.ConnState) {
				if s.Phase == client.PhaseLive {
					dec.Reconnected() // a new connection replays the log from its start
				}
				send(streamItem{state: &s})
			}, prog)
	}()

	var rule ReplayEnd
	if b.ReplayEnd != nil {
		rule = b.ReplayEnd(ctx, b.cl, sessionID)
	}
	if rule == nil {
		rule = NewQuietEnd(0)
	}
	var wake <-chan struct{}
	if w, ok := rule.(Waker); ok {
		wake = w.Wake()
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	live, synced := false, false
	var last time.Time // the last step of the stream
	arm := func() {
		timer.Stop()
		if !live || synced {
			return
		}
		if q := rule.Quiet(); q > 0 {
			timer.Reset(max(q-time.Since(last), 0))
		}
	}
	// Nothing reaches on once ctx has ended, even what was already queued.
	deliver := func(u backend.Update) {
		if ctx.Err() == nil {
			on(u)
		}
	}
	handle := func(it streamItem) {
		last = time.Now()
		if it.state == nil {
			rule.Decoded(it.evs)
			if len(it.evs) > 0 {
				deliver(backend.Update{Events: it.evs})
			}
			arm()
			return
		}
		u := backend.Update{State: it.state}
		switch it.state.Phase {
		case client.PhaseLive:
			live, synced = true, false
			rule.Connected()
		case client.PhaseReconnecting:
			if rule.Closed(errors.Is(it.state.Err, client.ErrStreamClosed)) && live && !synced {
				u.Synced = true
			}
			live = false
		case client.PhaseFailed:
			live = false
		}
		deliver(u)
		arm()
	}
	for {
		select {
		case <-ctx.Done():
			<-errc // the stream returns at once, leaving nothing behind
			return ctx.Err()
		case it := <-ch:
			handle(it)
		case <-timer.C:
			q := rule.Quiet()
			if !live || synced || q <= 0 {
				continue
			}
			if rest := q - time.Since(last); rest > 0 {
				timer.Reset(rest)
				continue
			}
			if prog.Busy(q) { // a large event is still arriving
				timer.Reset(q)
				continue
			}
			synced = true
			deliver(backend.Update{Synced: true})
		case <-wake:
			arm()
		case err := <-errc:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// The stream sent everything before it returned: deliver
			// what is still queued, then its verdict.
			for len(ch) > 0 {
				handle(<-ch)
			}
			if err == nil {
				err = fmt.Errorf("the event stream of task %s ended", sessionID)
			}
			return err
		}
	}
}

// WatchSessions implements backend.SessionWatcher from the daemon stream:
// daemon.tasks.synchronized replaces the list (on every connection),
// daemon.task.changed updates one task (a stopped task's update may leave
// fields out: what it lacks is kept).
func (b *Backend) WatchSessions(ctx context.Context, on func([]events.Task)) error {
	return b.WatchSessionsState(ctx, on, nil)
}

// WatchSessionsState is WatchSessions that also reports the daemon
// stream's connection state to onState (nil for none): the UI's task list
// shows it (tui/bridge.StateWatcher).
func (b *Backend) WatchSessionsState(ctx context.Context, on func([]events.Task), onState func(backend.ConnState)) error {
	var list []events.Task
	return b.cl.StreamDaemon(ctx, func(f events.Frame) {
		ev := events.Decode(f)
		switch ev.Kind {
		case events.KindTasksSynced:
			list = append(list[:0:0], ev.Tasks...)
		case events.KindTaskChanged:
			if ev.Task == nil {
				return
			}
			list = upsertTask(list, *ev.Task)
		default:
			return
		}
		on(append([]events.Task(nil), list...))
	}, onState)
}

// upsertTask merges t into the list, or puts it first (a new task is the
// newest).
func upsertTask(list []events.Task, t events.Task) []events.Task {
	for i := range list {
		if list[i].ID == t.ID {
			out := append(list[:0:0], list...)
			out[i] = list[i].Merge(t)
			return out
		}
	}
	return append([]events.Task{t}, list...)
}
