package maria

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
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

// streamItem is one step of the task stream on its way from the stream's
// goroutine, which decodes it, to Follow's.
type streamItem struct {
	frame *events.Frame // with FollowOptions.Frames only
	ev    events.Event  // events.Decode of the frame
	size  int           // the frame's data size
	state *sse.ConnState
}

// The stream's goroutine hands decoded steps over in batches: a hand-over
// wakes Follow's goroutine, and on a 2-core machine a wake-up per frame
// (100,000 in a day-long replay) costs more than handling the frame. A
// batch goes as soon as no frame read is waiting behind it
// (sse.Progress.Pending), so a live stream's frame is never held back, and
// at batchMax frames or batchBytes of frame data, so a long replay is
// handled while it is decoded. streamDepth bounds the batches decoded and
// not yet handled: a stream read faster than its consumer takes it waits
// instead of growing the heap.
const (
	batchMax    = 64
	batchBytes  = 256 << 10
	streamDepth = 2
)

// bigFrame is the size from which Follow collects garbage once a frame is
// delivered. The frame of a huge tool output is that much garbage then, and
// the GC's pacing (next collection at twice the live heap) lets garbage pile
// up to the size of everything kept so far: with a few such outputs, a
// consumer that keeps the timeline would take twice the memory it needs.
// Byte buffers hold no pointers, so the collection costs next to nothing.
const bigFrame = 8 << 20

// An update that said more was on its way is followed, once nothing is,
// by one that says so (client.Update's Backlog): looked at after
// backlogRecheck, then at doubling intervals up to backlogRecheckMax while
// an event is still partly read.
const (
	backlogRecheck    = 2 * time.Millisecond
	backlogRecheckMax = 64 * time.Millisecond
)

// Follow implements client.Backend: FollowWith without options.
func (b *Backend) Follow(ctx context.Context, sessionID string, on func(client.Update)) error {
	return b.FollowWith(ctx, sessionID, client.FollowOptions{}, func(s client.Step) { on(s.Update) })
}

// FollowWith follows a task stream. Every connection replays the task's
// whole log; frames are decoded on the stream's goroutine, in order, and
// accepted by maria's decoder on Follow's, which drops what was delivered
// before, so each Step carries only new events. Synced is set
// once the replay is in, as the ReplayEnd rule decides (by default
// EvidenceEnd), at most once per connection (with UntilIdle: see
// FollowOptions).
//
// maria's way with the options: UntilIdle asks the daemon (GET
// /task/{id}) each time the replay is in and whenever the stream was quiet
// for the rule's window (so at Settle's pace while the daemon says
// generating), on every connection.
func (b *Backend) FollowWith(ctx context.Context, sessionID string, o client.FollowOptions, on func(client.Step)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prog := &sse.Progress{}
	steps := make(chan []streamItem, streamDepth)
	errc := make(chan error, 1)
	go func() {
		var batch []streamItem
		size := 0
		send := func() {
			if len(batch) == 0 {
				return
			}
			select {
			case steps <- batch:
			case <-ctx.Done():
			}
			batch, size = nil, 0
		}
		err := b.cl.StreamTaskProgress(ctx, sessionID,
			func(f events.Frame) {
				it := streamItem{ev: Decode(f), size: len(f.Data)}
				if o.Frames {
					it.frame = &f
				}
				batch = append(batch, it)
				size += len(f.Data)
				// Sent before this frame counts as delivered, so that
				// backlog never misses a frame held here.
				if prog.Pending() <= 1 || len(batch) >= batchMax || size >= batchBytes {
					send()
				}
			},
			func(s sse.ConnState) {
				batch = append(batch, streamItem{state: &s})
				send()
			},
			prog)
		send()
		close(steps)
		errc <- err
	}()

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
	var wake <-chan struct{}
	if w, ok := rule.(Waker); ok {
		wake = w.Wake()
	}
	dec := NewDecoder()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	live, synced := false, false
	confirming := false // a strict window passed once; a second look is due
	waiting := func() bool { return live && (!synced || o.UntilIdle) }
	arm := func(d time.Duration) {
		timer.Stop()
		confirming = false
		if waiting() && d > 0 {
			timer.Reset(d)
		}
	}
	// backlog: a step queued in steps, or a frame read by the stream and
	// not yet handed over (being decoded), or partly read. The stream
	// counts a frame as read until just after it was queued, so the last
	// frame may still count itself: a More is looked at again (recheck)
	// until it turns into a None of its own.
	rest := 0 // steps of the batch in hand not yet handled
	backlog := func() bool { return rest > 0 || len(steps) > 0 || !prog.Settled(0) }
	// armQuiet, after a frame, looks at the quiet once it can have lasted
	// d: with nothing else on its way (backlog), it counts from the last
	// byte read, often a few milliseconds before the frame that byte ended
	// was decoded and handled.
	armQuiet := func(d time.Duration) {
		if d > 0 && !backlog() {
			d = max(d-prog.Quiet(), time.Millisecond)
		}
		arm(d)
	}
	window := func() time.Duration { w, _ := rule.Quiet(); return w }
	// Nothing reaches on once ctx has ended, even what was already queued.
	deliver := func(s client.Step) {
		if ctx.Err() == nil {
			on(s)
		}
	}
	// inNow is the replay's end: Synced, or with UntilIdle the daemon's
	// word first (a run's end in the stream is not enough while the
	// daemon says generating).
	inNow := func(u *client.Update) {
		if !o.UntilIdle {
			synced = true
			u.Synced = true
			return
		}
		t, err := b.cl.Task(ctx, sessionID)
		st := t.Status
		if err != nil {
			st = ""
		}
		if s, ok := rule.(StatusTaker); ok {
			s.Status(st)
		}
		if err == nil && st != events.StatusGenerating {
			u.Synced = true
		}
	}
	more, recheckIn := false, backlogRecheck
	recheck := time.NewTimer(time.Hour)
	recheck.Stop()
	defer recheck.Stop()
	handle := func(it streamItem) {
		if it.state == nil {
			evs := dec.Accept(it.ev)
			rule.Decoded(it.ev.Kind, evs)
			// The quiet window runs from the frame, not from the end of
			// on: a consumer that works while the stream is quiet (the UI
			// drawing) does not push the end back by its work. The
			// window is looked at strictly when it ends, whenever that is.
			armQuiet(window())
			if len(evs) > 0 || o.Frames {
				bl := client.BacklogNone
				if more = backlog(); more {
					bl = client.BacklogMore
					recheckIn = backlogRecheck
					recheck.Reset(recheckIn)
				}
				deliver(client.Step{Update: client.Update{Events: evs, Backlog: bl}, Frame: it.frame})
			}
			if it.size >= bigFrame {
				runtime.GC() // see bigFrame
			}
			return
		}
		u := client.Update{State: it.state}
		switch it.state.Phase {
		case sse.PhaseLive:
			dec.Reconnected() // a new connection replays the log from its start
			live, synced = true, false
			rule.Connected()
		case sse.PhaseReconnecting:
			replayed := rule.Closed(errors.Is(it.state.Err, sse.ErrStreamClosed))
			if replayed && waiting() {
				inNow(&u)
			}
			live = false
		case sse.PhaseFailed:
			live = false
		}
		deliver(client.Step{Update: u})
		arm(window())
	}
	handleAll := func(batch []streamItem) {
		for i, t := range batch {
			rest = len(batch) - 1 - i
			handle(t)
		}
		rest = 0
	}
	ch := (<-chan []streamItem)(steps)
	for {
		select {
		case <-ctx.Done():
			<-errc // the stream returns at once, leaving nothing behind
			return ctx.Err()
		case batch, ok := <-ch:
			if !ok {
				ch = nil // the stream ended: its error follows on errc
				continue
			}
			handleAll(batch)
		case <-timer.C:
			if !waiting() {
				continue
			}
			w, strict := rule.Quiet()
			if w <= 0 {
				continue
			}
			if strict {
				// Strong evidence: quiet means no byte for w, no event
				// half read or on its way, twice.
				if !prog.Settled(w) || len(steps) > 0 {
					arm(w)
					continue
				}
				if !confirming {
					timer.Reset(SettleConfirm)
					confirming = true
					continue
				}
			} else if prog.Busy(w) { // a large event is still arriving
				arm(w)
				continue
			}
			var u client.Update
			inNow(&u)
			if u.Synced {
				deliver(client.Step{Update: u})
			}
			arm(window())
		case <-wake:
			arm(window())
		case <-recheck.C:
			if !more {
				continue
			}
			if backlog() {
				recheckIn = min(2*recheckIn, backlogRecheckMax)
				recheck.Reset(recheckIn)
				continue
			}
			more = false
			deliver(client.Step{Update: client.Update{Backlog: client.BacklogNone}})
		case err := <-errc:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// The stream sent everything before it returned: deliver
			// what is still queued, then its verdict.
			if ch != nil {
				for batch := range ch {
					handleAll(batch)
				}
			}
			if err == nil {
				err = fmt.Errorf("the event stream of task %s ended", sessionID)
			}
			return err
		}
	}
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
