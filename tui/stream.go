package tui

import (
	"context"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// frameInterval is the coalescing window: however fast events arrive, a
// stream hands the UI at most one batch per frame (60 Hz), so the UI redraws
// at most once per frame on their account.
const frameInterval = 16 * time.Millisecond

// streamSource says which stream a batch came from.
type streamSource uint8

const (
	srcDaemon streamSource = iota
	srcTask
)

// streamBatchMsg carries the events (already decoded) and the latest
// connection state a stream gathered during one frame. Gen tells batches of
// an earlier attach (already cancelled, maybe still draining) apart.
type streamBatchMsg struct {
	Src    streamSource
	Gen    uint64
	Events []events.Event
	State  *connState // nil when the state did not change
	// Ended is set once, when the stream function returned; Err is why.
	Ended bool
	Err   error
}

// streamControl is how the model asks for streams without doing IO itself:
// Watch only records the wish; the hub's goroutine does the rest.
type streamControl interface {
	// WatchTask streams taskID's events with the given generation, ending
	// the previous task stream; "" ends it without starting another.
	WatchTask(gen uint64, taskID string)
}

// batcher collects decoded events from a stream callback and hands them to
// the UI at most once per frameInterval. The callback never blocks on the
// UI: events are appended under a mutex and a cap-1 channel kicks the
// flusher.
type batcher struct {
	mu  sync.Mutex
	evs []events.Event
	// dec reads a raw maria stream: it drops what each reconnect's replay
	// repeats (backends that decode themselves stream events instead).
	dec    *events.MariaDecoder
	state  *connState
	ended  bool
	err    error
	kick   chan struct{}
	closed chan struct{}
}

func newBatcher() *batcher {
	return &batcher{kick: make(chan struct{}, 1), closed: make(chan struct{}), dec: events.NewMariaDecoder()}
}

func (b *batcher) poke() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// onFrame is the stream callback: decode here, off the Update path.
func (b *batcher) onFrame(f events.Frame) {
	evs := b.dec.Decode(f)
	if len(evs) == 0 {
		return // a replayed event
	}
	b.mu.Lock()
	b.evs = append(b.evs, evs...)
	b.mu.Unlock()
	b.poke()
}

// onEvent is the callback of backends that decode themselves.
func (b *batcher) onEvent(ev events.Event) {
	b.mu.Lock()
	b.evs = append(b.evs, ev)
	b.mu.Unlock()
	b.poke()
}

func (b *batcher) onState(s connState) {
	b.mu.Lock()
	b.state = &s
	if s.Phase == client.PhaseLive {
		// A new connection replays the log from its start. (The stream
		// goroutine calls onFrame and onState in order, so no lock.)
		b.dec.Reconnected()
	}
	b.mu.Unlock()
	b.poke()
}

// end records that the stream returned; the flusher delivers what is left
// and then stops.
func (b *batcher) end(err error) {
	b.mu.Lock()
	b.ended, b.err = true, err
	b.mu.Unlock()
	b.poke()
}

func (b *batcher) take() streamBatchMsg {
	b.mu.Lock()
	defer b.mu.Unlock()
	msg := streamBatchMsg{Events: b.evs, State: b.state, Ended: b.ended, Err: b.err}
	b.evs, b.state = nil, nil
	return msg
}

// flush runs until ctx ends or the stream ended and everything was
// delivered. send may block (the UI is busy); events that arrive meanwhile
// pile up in the batcher and go out together in the next batch.
func (b *batcher) flush(ctx context.Context, src streamSource, gen uint64, send func(tea.Msg)) {
	defer close(b.closed)
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		select {
		case <-ctx.Done():
			// Deliver the end so the UI can show it; the program may be
			// gone, which Send tolerates.
			return
		case <-b.kick:
		}
		start := time.Now()
		msg := b.take()
		msg.Src, msg.Gen = src, gen
		if len(msg.Events) > 0 || msg.State != nil || msg.Ended {
			send(msg)
		}
		if msg.Ended {
			return
		}
		// Hold the next batch back until the frame is over.
		if wait := frameInterval - time.Since(start); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
	}
}

// streamHub owns every stream goroutine. The daemon stream runs for the
// program's whole life (the task list stays live while attached, so going
// back is instant); the task stream follows WatchTask.
type streamHub struct {
	ctx  context.Context
	b    Backend
	reqs chan watchReq
	done chan struct{}
	// outbox reports changes of a task's outbox by anyone (nil: the store
	// cannot tell); set before start.
	outbox func(ctx context.Context, taskID string) <-chan struct{}
}

type watchReq struct {
	gen    uint64
	taskID string
}

func newStreamHub(ctx context.Context, b Backend) *streamHub {
	return &streamHub{ctx: ctx, b: b, reqs: make(chan watchReq, 1), done: make(chan struct{})}
}

// WatchTask never blocks: the latest wish replaces an unread earlier one.
// Only the Update goroutine calls it, so drain-then-send cannot race with
// another sender.
func (h *streamHub) WatchTask(gen uint64, taskID string) {
	select {
	case <-h.reqs:
	default:
	}
	h.reqs <- watchReq{gen: gen, taskID: taskID}
}

// start launches the hub; send delivers messages to the program.
func (h *streamHub) start(send func(tea.Msg)) {
	go h.run(send)
}

// wait returns when every stream goroutine has ended (after ctx ends).
func (h *streamHub) wait() { <-h.done }

func (h *streamHub) run(send func(tea.Msg)) {
	defer close(h.done)
	var wg sync.WaitGroup
	defer wg.Wait()

	run := func(ctx context.Context, src streamSource, gen uint64, stream func(context.Context, *batcher) error) {
		bt := newBatcher()
		wg.Add(2)
		go func() {
			defer wg.Done()
			bt.flush(ctx, src, gen, send)
		}()
		go func() {
			defer wg.Done()
			bt.end(stream(ctx, bt))
		}()
	}

	run(h.ctx, srcDaemon, 0, func(ctx context.Context, bt *batcher) error {
		return h.b.StreamDaemon(ctx, bt.onFrame, bt.onState)
	})

	var cancelTask context.CancelFunc = func() {}
	defer func() { cancelTask() }()
	for {
		select {
		case <-h.ctx.Done():
			return
		case r := <-h.reqs:
			cancelTask()
			cancelTask = func() {}
			if r.taskID == "" {
				continue
			}
			ctx, cancel := context.WithCancel(h.ctx)
			cancelTask = cancel
			id := r.taskID
			if h.outbox != nil {
				if ch := h.outbox(ctx, id); ch != nil {
					gen := r.gen
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range ch { // closed when ctx ends
							send(outboxChangedMsg{gen: gen, taskID: id})
						}
					}()
				}
			}
			run(ctx, srcTask, r.gen, func(ctx context.Context, bt *batcher) error {
				if es, ok := h.b.(EventStreamer); ok {
					return es.StreamTaskEvents(ctx, id, bt.onEvent, bt.onState)
				}
				return h.b.StreamTask(ctx, id, bt.onFrame, bt.onState)
			})
		}
	}
}
