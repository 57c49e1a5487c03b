package tui

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/memlimit"
	"github.com/perch-tui/perch/internal/ordered"
)

// frameInterval is the coalescing window: however fast events arrive, a
// stream hands the UI at most one batch per frame (60 Hz), so the UI redraws
// at most once per frame on their account.
const frameInterval = 16 * time.Millisecond

// A burst of events (a replay, a reconnect's catch-up) is handed to the UI
// in few large batches rather than one per frame: the flusher holds a batch
// while the decoder keeps adding to it, until the decoder has been quiet
// for batchQuiet or the batch has been held for the current hold. The hold
// starts at batchFirstHold (the first paint of a long replay comes early)
// and doubles with each batch of the same burst up to batchMaxHold. Each
// batch costs the UI a frame (the new tail is laid out: markdown), which a
// 10,000-event replay would otherwise pay sixty times a second while it
// competes for the processor with reading and decoding. A lone event (a
// live delta) waits batchQuiet; the last event of a replay is handed over
// batchQuiet after it was decoded, so the final reply is drawn as soon as
// its bytes are in.
const (
	batchQuiet     = 3 * time.Millisecond
	batchFirstHold = 50 * time.Millisecond
	batchMaxHold   = 400 * time.Millisecond
)

// rawQueueMax bounds the bytes of frames read but not decoded yet, and
// rawQueueDepth their number. Past either the stream reader waits for the
// decoder (never for the UI).
const (
	rawQueueMax   = 1 << 20
	rawQueueDepth = 128
)

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

// rawOp is one thing the stream goroutine reported, in order: a frame to
// decode, a connection state or the stream's end.
type rawOp struct {
	frame events.Frame
	state *connState
	end   bool
	err   error
}

// decodedOp is a rawOp once its frame was decoded (events.Decode, pure):
// the raw frame is gone.
type decodedOp struct {
	ev       events.Event
	hasFrame bool
	size     int // the raw frame's bytes
	state    *connState
	end      bool
	err      error
}

func decodeOp(op rawOp) decodedOp {
	d := decodedOp{state: op.state, end: op.end, err: op.err, size: len(op.frame.Data)}
	if op.frame.Data != nil || op.frame.Name != "" {
		d.ev, d.hasFrame = events.Decode(op.frame), true
	}
	return d
}

// batcher runs a stream's pipeline: the stream goroutine reads and queues
// frames; the pool's workers decode them (one per core, while the next
// frames are read); the decoder goroutine takes them in their order and
// drops what a replay repeats (the stateful part); the flusher hands the
// decoded events to the UI in batches, at most once per frameInterval.
// Nothing waits for the UI but the flusher: events that arrive meanwhile
// pile up and go out together.
type batcher struct {
	// Read, not yet decoded, or decoded and not yet taken in order.
	pool *ordered.Pool[rawOp, decodedOp]

	mu sync.Mutex
	// Decoded, not yet handed to the UI.
	evs   []events.Event
	state *connState
	ended bool
	err   error
	last  time.Time // when the decoder last added something

	// dec reads a raw maria stream: it drops what each reconnect's replay
	// repeats (backends that decode themselves stream events instead).
	// Only the decoder goroutine uses it.
	dec *events.MariaDecoder

	// mem (nil unless the UI owns its process) bounds the Go memory while
	// a replay comes in (see memlimit): read counts the frames' bytes.
	mem  *memlimit.Bound
	read atomic.Int64

	kick    chan struct{} // cap 1: wakes the flusher
	stopped chan struct{} // closed when the decoder stops
	closed  chan struct{}
}

func newBatcher() *batcher {
	return &batcher{
		pool:    ordered.New(ordered.Workers(), rawQueueDepth, rawQueueMax, decodeOp),
		kick:    make(chan struct{}, 1),
		stopped: make(chan struct{}), closed: make(chan struct{}),
		dec: events.NewMariaDecoder(),
	}
}

func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// push queues one op for the decoder, waiting while the queue is full
// (but not once the decoder stopped: the stream is being torn down).
func (b *batcher) push(op rawOp) { b.pool.Put(op, len(op.frame.Data), b.stopped) }

// onFrame is the stream callback of maria streams: the decoder goroutine
// decodes, off both the reader and the Update path.
func (b *batcher) onFrame(f events.Frame) { b.push(rawOp{frame: f}) }

// onEvent is the callback of backends that decode themselves.
func (b *batcher) onEvent(ev events.Event) {
	b.mu.Lock()
	b.evs = append(b.evs, ev)
	b.last = time.Now()
	b.mu.Unlock()
	poke(b.kick)
}

// onState goes through the queue: a reconnect must reset the decoder's
// replay position between the right two frames.
func (b *batcher) onState(s connState) { b.push(rawOp{state: &s}) }

// end records that the stream returned; what is queued is decoded and
// delivered first. The stream's goroutine calls it last: it closes the
// pool and waits for its workers.
func (b *batcher) end(err error) {
	b.push(rawOp{end: true, err: err})
	b.pool.Close()
	b.pool.Wait()
}

// decode runs the decoder until ctx ends or the stream's end was decoded.
func (b *batcher) decode(ctx context.Context) {
	defer close(b.stopped)
	results := b.pool.Results()
	for {
		select {
		case <-ctx.Done():
			return
		case t, ok := <-results:
			if !ok {
				return
			}
			op := t.Wait()
			if b.apply(&op) || ctx.Err() != nil {
				return
			}
		}
	}
}

// apply adds one decoded op to the pending batch, in stream order; true
// once the end is in.
func (b *batcher) apply(op *decodedOp) bool {
	var evs []events.Event
	if op.hasFrame {
		if b.mem != nil {
			b.read.Add(int64(op.size))
			b.mem.Update()
		}
		if evs = b.dec.Accept(op.ev); len(evs) == 0 {
			return false // a replayed event
		}
	}
	if op.state != nil && op.state.Phase == client.PhaseLive {
		// A new connection replays the log from its start.
		b.dec.Reconnected()
	}
	b.mu.Lock()
	b.evs = append(b.evs, evs...)
	if op.state != nil {
		b.state = op.state
	}
	if op.end {
		b.ended, b.err = true, op.err
	}
	b.last = time.Now()
	b.mu.Unlock()
	poke(b.kick)
	return op.end
}

func (b *batcher) take() streamBatchMsg {
	b.mu.Lock()
	defer b.mu.Unlock()
	msg := streamBatchMsg{Events: b.evs, State: b.state, Ended: b.ended, Err: b.err}
	b.evs, b.state = nil, nil
	return msg
}

// flush runs the decoder and hands batches to the UI until ctx ends or the
// stream ended and everything was delivered. send may block (the UI is
// busy); events that arrive meanwhile go out together in the next batch.
func (b *batcher) flush(ctx context.Context, src streamSource, gen uint64, send func(tea.Msg)) {
	defer close(b.closed)
	dctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.decode(dctx)
	}()
	defer func() {
		stop()
		wg.Wait()
		// The decoder is gone: nothing more is taken, so the workers can
		// stop (a reader still putting is released: see push).
		b.pool.Close()
		b.pool.Wait()
		if b.mem != nil {
			b.mem.Relax()
		}
	}()

	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	sleep := func(d time.Duration) bool {
		timer.Reset(d)
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			return true
		}
	}
	hold := batchFirstHold
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.kick:
		}
		// Hold the batch while a burst goes on (see batchQuiet).
		held := time.Now()
		for {
			b.mu.Lock()
			last, ended := b.last, b.ended
			b.mu.Unlock()
			// Frames read and not yet decoded: a decoder that was merely
			// descheduled for a while on a busy machine has not gone quiet.
			busy := b.pool.Pending() > 0
			if ended {
				break
			}
			now := time.Now()
			quiet := batchQuiet - now.Sub(last)
			if busy {
				quiet = batchQuiet
			}
			if quiet <= 0 {
				hold = batchFirstHold // the burst is over
				if b.mem != nil {
					b.mem.Relax() // the replay is in: garbage may grow again
				}
				break
			}
			if now.Sub(held) >= hold {
				hold = min(2*hold, batchMaxHold)
				break
			}
			if !sleep(min(quiet, hold-now.Sub(held))) {
				return
			}
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
		if wait := frameInterval - time.Since(start); wait > 0 && !sleep(wait) {
			return
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
	// boundMemory: the UI owns its process, so a task stream's replay may
	// set a soft memory limit (see memlimit); set before start.
	boundMemory bool
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

	// The process's own memory limit, which every bound restores.
	limit := memlimit.Current()
	run := func(ctx context.Context, src streamSource, gen uint64, stream func(context.Context, *batcher) error) {
		bt := newBatcher()
		// Only a task's raw stream: the bound follows the frames' bytes
		// (a backend that decodes itself hands over no frames).
		if _, decodes := h.b.(EventStreamer); h.boundMemory && src == srcTask && !decodes {
			bt.mem = memlimit.Start(bt.read.Load, limit)
		}
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
