package maria

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// Backend is maria as a live backend: a Client behind the
// client.Backend interface. Its Follow decodes the task stream with
// maria's decoder (which drops what each reconnect replays) and says when
// the replay is in.
type Backend struct {
	cl *Client
	// ReplayEnd makes, for each Follow, the rule that says when its
	// replay is in; nil means NewEvidenceEnd with the default windows.
	// ctx ends with the Follow (for work the rule does in the background,
	// such as asking the daemon for the task's status with cl).
	ReplayEnd func(ctx context.Context, cl *Client, sessionID string) ReplayEnd
}

var (
	_ client.Backend        = (*Backend)(nil)
	_ client.SessionWatcher = (*Backend)(nil)
	_ client.OptionFollower = (*Backend)(nil)
)

// New wraps a client (built with whatever discovery and dialling options
// the caller needs).
func New(cl *Client) *Backend { return &Backend{cl: cl} }

// Open implements the registry's contract: a maria backend for cfg.URL
// (an http(s) URL ending in /v1), with cfg.Token sent as a bearer token.
func Open(cfg client.Config) (client.Backend, error) {
	b, err := OpenWith(cfg)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// OpenWith is Open with extra client options (tests: timings, a dialer).
func OpenWith(cfg client.Config, opts ...Option) (*Backend, error) {
	cl, err := NewClient(cfg.URL, append(ClientOptions(cfg), opts...)...)
	if err != nil {
		return nil, err
	}
	return New(cl), nil
}

// ClientOptions turns a client.Config into client options: the token as
// an Authorization header and cfg.Header (the client never prints header
// values), the resolver and the discovered URL's loopback preference for
// the client's own dialling, and the HTTP client when one is given (which
// then dials as it likes: no loopback fallback).
func ClientOptions(cfg client.Config) []Option {
	var opts []Option
	if cfg.Token != "" {
		h := http.Header{}
		h.Set("Authorization", "Bearer "+cfg.Token)
		opts = append(opts, WithHeaders(h))
	}
	if len(cfg.Header) > 0 {
		opts = append(opts, WithHeaders(cfg.Header))
	}
	if cfg.LookupHost != nil {
		opts = append(opts, WithLookupHost(cfg.LookupHost))
	}
	if cfg.Discovered {
		opts = append(opts, WithDiscovered())
	}
	if cfg.Client != nil {
		opts = append(opts, WithHTTPClient(cfg.Client))
	}
	return opts
}

// Probe reports whether cfg.URL answers as a maria daemon (nil) or not.
func Probe(ctx context.Context, cfg client.Config) error {
	_, err := ProbeTasks(ctx, cfg)
	return err
}

// ProbeTasks is Probe returning, when cfg.URL answers as maria, the task
// list the answer carries (nil when it does not decode), so that a caller
// that probed need not ask for the list again.
//
// The probe opens the daemon stream (GET /events) and reads its first
// frame: maria always starts it with a named event,
// daemon.tasks.synchronized, holding {"tasks":[…]} — a name no other
// server sends, and an answer that costs the daemon one task list. The
// stream is closed as soon as that frame (or anything else) arrives.
func ProbeTasks(ctx context.Context, cfg client.Config) ([]events.Task, error) {
	cl, err := NewClient(cfg.URL, ClientOptions(cfg)...)
	if err != nil {
		return nil, fmt.Errorf("not a maria daemon URL: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var verdict error
	var tasks []events.Task
	decided := false
	err = cl.StreamDaemon(ctx, func(f events.Frame) {
		if decided {
			return
		}
		decided = true
		cancel()
		if !isTaskSync(f) {
			verdict = fmt.Errorf("%s/events: the first event is not maria's daemon.tasks.synchronized; not a maria daemon", cl.BaseURL())
			return
		}
		if ts, err := ParseTasks(f.Data); err == nil {
			tasks = append(make([]events.Task, 0, len(ts)), ts...) // never nil: an empty list is a list
		}
	}, func(s sse.ConnState) {
		if decided || s.Phase != sse.PhaseReconnecting {
			return
		}
		// A probe does not wait out a backoff: a broken or closed stream
		// is not a daemon's answer.
		decided = true
		verdict = fmt.Errorf("not a maria daemon: %w", s.Err)
		cancel()
	})
	if decided {
		return tasks, verdict
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("%s/events: no maria event in time: %w", cl.BaseURL(), err)
	}
	return nil, fmt.Errorf("not a maria daemon: %w", err)
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
func (b *Backend) Client() *Client { return b.cl }

// Name implements client.Backend.
func (b *Backend) Name() string { return client.Maria }

// URL implements client.Backend: the normalized base URL (…/v1). maria's
// URLs carry no query, so no token.
func (b *Backend) URL() string { return b.cl.BaseURL() }

// Capabilities implements client.Backend: maria creates, sends, cancels
// and queues follow-ups itself. Its usage reports no cost.
func (b *Backend) Capabilities() client.Capabilities {
	return client.Capabilities{Create: true, Send: true, Cancel: true, ServerQueue: true, WebSearch: true,
		Home: true, StreamStaysOpen: true}
}

// Sessions implements client.Backend: the daemon's tasks, stopped ones
// included, in the daemon's order.
func (b *Backend) Sessions(ctx context.Context) ([]events.Task, error) { return b.cl.Tasks(ctx) }

// Session implements client.Backend: the task is resolved from the list
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

// Send implements client.Backend; errors are classified for the outbox
// (Classify). maria queues a follow-up to a busy task itself.
func (b *Backend) Send(ctx context.Context, sessionID string, m client.Message) (client.SendResult, error) {
	res, err := b.cl.Send(ctx, sessionID, m.Text, m.WebSearch)
	if err != nil {
		return client.SendResult{}, Classify(err)
	}
	return client.SendResult{ID: res.ID, Queued: res.Queued}, nil
}

// Cancel implements client.Backend. When nothing runs the error
// satisfies errors.Is(err, client.ErrNotRunning).
func (b *Backend) Cancel(ctx context.Context, sessionID string) ([]events.QueuedMessage, error) {
	return b.cl.Cancel(ctx, sessionID)
}

// Create implements client.Backend (it can take minutes: the daemon
// starts the task's process first).
func (b *Backend) Create(ctx context.Context, r client.CreateRequest) (events.Task, error) {
	res, err := b.cl.CreateTask(ctx, CreateTaskRequest{Name: r.Name, Model: r.Model, Cwd: r.Cwd, Message: r.Prompt, WebSearch: r.WebSearch})
	if err != nil {
		return events.Task{}, err
	}
	return res.Task, nil
}

// Follow implements client.Backend: FollowWith without options.
func (b *Backend) Follow(ctx context.Context, sessionID string, on func(client.Update)) error {
	return b.FollowWith(ctx, sessionID, client.FollowOptions{}, func(s client.Step) { on(s.Update) })
}

// FollowWith follows a task stream. Every connection replays the task's
// whole log. Each frame is decoded and accepted by maria's decoder (which
// drops what was delivered before) on the stream's goroutine as it is
// read, and its new events go to on at once: nothing is gathered here
// (the consumer that shows them coalesces them), and a slow on slows the
// reading. Synced is set once the replay is in, as the ReplayEnd rule
// decides (by default EvidenceEnd), at most once per connection (with
// UntilIdle: see FollowOptions); that word comes from a timer, since
// maria sends no end-of-replay marker and the stream is silent then. on
// is called one call at a time, never concurrently.
//
// maria's way with the options: UntilIdle asks the daemon (GET
// /task/{id}) each time the replay is in and whenever the stream was quiet
// for the rule's window (so at Settle's pace while the daemon says
// generating), on every connection.
func (b *Backend) FollowWith(ctx context.Context, sessionID string, o client.FollowOptions, on func(client.Step)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var rule ReplayEnd
	if b.ReplayEnd != nil {
		rule = b.ReplayEnd(ctx, b.cl, sessionID)
	}
	if rule == nil {
		rule = NewEvidenceEnd(ctx, b.cl, sessionID, 0, 0)
	}
	if s, ok := rule.(Stopper); ok {
		defer s.Stop() // after cancel, which runs first
	}
	defer cancel()
	f := &follower{b: b, id: sessionID, o: o, on: on, ctx: ctx, rule: rule,
		dec: NewDecoder(), act: &sse.Activity{}, poke: make(chan struct{}, 1)}
	var wake <-chan struct{}
	if w, ok := rule.(Waker); ok {
		wake = w.Wake()
	}
	timerDone := make(chan struct{})
	go func() {
		defer close(timerDone)
		f.watchQuiet(wake)
	}()
	err := b.cl.StreamTaskActivity(ctx, sessionID, f.frame, f.state, f.act)
	stopped := ctx.Err()
	f.mu.Lock()
	f.done = true
	f.mu.Unlock()
	cancel()
	<-timerDone
	if stopped != nil {
		return stopped
	}
	if err == nil {
		err = fmt.Errorf("the event stream of task %s ended", sessionID)
	}
	return err
}

// follower is one FollowWith: the stream's goroutine hands it frames and
// states, and its quiet watch (watchQuiet) says when the replay is in.
type follower struct {
	b    *Backend
	id   string
	o    client.FollowOptions
	on   func(client.Step)
	ctx  context.Context
	rule ReplayEnd
	dec  *Decoder
	act  *sse.Activity
	poke chan struct{} // cap 1: wakes watchQuiet

	mu         sync.Mutex // what follows, and every call of on
	live       bool       // a connection is open
	synced     bool       // its replay is in
	confirming bool       // a strict window passed once; a second look is due
	armed      bool       // watchQuiet's timer is set, for due
	due        time.Time
	done       bool      // the stream returned: nothing more reaches on
	last       time.Time // when the last frame or state was handled
}

// deliver hands s to on, unless the follow ended. Called with mu held.
func (f *follower) deliver(s client.Step) {
	if !f.done && f.ctx.Err() == nil {
		f.on(s)
	}
}

// waiting: the replay's end is still to be told.
func (f *follower) waiting() bool { return f.live && (!f.synced || f.o.UntilIdle) }

// touched records a frame or state and has watchQuiet look at the quiet
// once it can have lasted the rule's window. The window runs from the
// frame, not from the end of on: a consumer that works while the stream
// is quiet (the UI drawing) does not push the end back by its work. A
// timer already set is left alone (it looks again when it fires) unless
// the window shrank (a run's end came): one wake-up per window, not per
// frame.
func (f *follower) touched() {
	f.last = time.Now()
	f.confirming = false
	if !f.waiting() {
		return
	}
	if w, _ := f.rule.Quiet(); w > 0 && (!f.armed || f.last.Add(w).Before(f.due)) {
		f.armed = true
		select {
		case f.poke <- struct{}{}:
		default:
		}
	}
}

func (f *follower) frame(fr events.Frame) {
	ev := Decode(fr) // before the lock: the quiet watch need not wait for it
	f.mu.Lock()
	defer f.mu.Unlock()
	evs := f.dec.Accept(ev)
	f.rule.Decoded(ev.Kind, evs)
	f.touched()
	if len(evs) > 0 || f.o.Frames {
		s := client.Step{Update: client.Update{Events: evs}}
		if f.o.Frames {
			fr.Data = bytes.Clone(fr.Data) // borrowed from the stream
			s.Frame = &fr
		}
		f.deliver(s)
	}
}

func (f *follower) state(st sse.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := client.Update{State: &st}
	switch st.Phase {
	case sse.PhaseLive:
		f.dec.Reconnected() // a new connection replays the log from its start
		f.live, f.synced = true, false
		f.rule.Connected()
	case sse.PhaseReconnecting:
		replayed := f.rule.Closed(errors.Is(st.Err, sse.ErrStreamClosed))
		if replayed && f.waiting() {
			f.inNow(&u)
		}
		f.live = false
	case sse.PhaseFailed:
		f.live = false
	}
	f.deliver(client.Step{Update: u})
	f.touched()
}

// inNow is the replay's end: Synced, or with UntilIdle the daemon's word
// first (a run's end in the stream is not enough while the daemon says
// generating).
func (f *follower) inNow(u *client.Update) {
	if !f.o.UntilIdle {
		f.synced = true
		u.Synced = true
		return
	}
	t, err := f.b.cl.Task(f.ctx, f.id)
	st := t.Status
	if err != nil {
		st = ""
	}
	if s, ok := f.rule.(StatusTaker); ok {
		s.Status(st)
	}
	if err == nil && st != events.StatusGenerating {
		u.Synced = true
	}
}

// watchQuiet says when the replay is in, until the follow's context ends:
// it sleeps until the rule's quiet window can have passed, and looks.
func (f *follower) watchQuiet(wake <-chan struct{}) {
	t := time.NewTimer(time.Hour)
	t.Stop()
	defer t.Stop()
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-f.poke:
		case <-wake:
		case <-t.C:
		}
		f.mu.Lock()
		d := f.look()
		f.armed, f.due = d > 0, time.Now().Add(d)
		f.mu.Unlock()
		if d > 0 {
			t.Reset(d)
		}
	}
}

// look says the replay is in if the stream was quiet long enough: no
// frame handled and no byte read within the rule's window (so no large
// event arriving), and with strong evidence (strict) the same again
// SettleConfirm later, so that bytes the kernel already holds (the
// process may have been descheduled for the whole window) are read first.
// It returns when to look next (0: not until a frame or state comes).
// Called with mu held.
func (f *follower) look() time.Duration {
	if f.done || !f.waiting() {
		return 0
	}
	w, strict := f.rule.Quiet()
	if w <= 0 {
		return 0
	}
	if quiet := min(time.Since(f.last), f.act.Quiet()); quiet < w {
		f.confirming = false
		return w - quiet
	}
	if strict && !f.confirming {
		f.confirming = true
		return SettleConfirm
	}
	f.confirming = false
	var u client.Update
	f.inNow(&u)
	if u.Synced {
		f.deliver(client.Step{Update: u})
	}
	if !f.waiting() {
		return 0
	}
	w, _ = f.rule.Quiet() // with UntilIdle: ask again after a window
	return max(w, 0)
}

// WatchSessions implements client.SessionWatcher from the daemon stream:
// daemon.tasks.synchronized replaces the list (on every connection),
// daemon.task.changed updates one task (a stopped task's update may leave
// fields out: what it lacks is kept).
func (b *Backend) WatchSessions(ctx context.Context, on func([]events.Task)) error {
	return b.WatchSessionsState(ctx, on, nil)
}

// WatchSessionsState is WatchSessions that also reports the daemon
// stream's connection state to onState (nil for none): the UI's task list
// shows it (client.SessionStateWatcher).
func (b *Backend) WatchSessionsState(ctx context.Context, on func([]events.Task), onState func(client.ConnState)) error {
	var list []events.Task
	return b.cl.StreamDaemon(ctx, func(f events.Frame) {
		ev := Decode(f)
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
