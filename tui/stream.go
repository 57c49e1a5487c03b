package tui

import (
	"context"
	"iter"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
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
//
// Within a burst (once a batch has gathered burstEvents events, until the
// stream has added nothing for stallMax) the quiet window is longer: the
// stream's goroutine decodes as it goes, and on a busy machine it is
// descheduled for milliseconds at a time, which is not the end of the
// replay. The window is 1.5 times the burst's longest recent pause (gaps
// between events from stallMin to stallMax, slowly forgotten as events
// follow), at least burstQuiet and at most burstQuietMax: the last event
// of a replay waits that long, a live delta batchQuiet.
//
// The backend's reader hands each decoded step over as it reads it (no
// stage before this one gathers them), so this window is the only guess
// at a burst's end, and the last event of a replay pays it. burstQuiet
// was 20 ms beside a backend's hint that more was on its way; without
// one, 10 ms halved the final reply's wait on a 10,000-event replay
// (BenchmarkReplayFinalReplyLag: 20.7 → 10.6 ms) with as many batches (13).
const (
	batchQuiet     = 3 * time.Millisecond
	burstQuiet     = 10 * time.Millisecond
	burstQuietMax  = 100 * time.Millisecond
	burstEvents    = 64
	stallMin       = time.Millisecond
	stallMax       = 250 * time.Millisecond
	batchFirstHold = 50 * time.Millisecond
	batchMaxHold   = 400 * time.Millisecond
)

// pollEvery is how often the session list of a backend that cannot watch
// it is asked again (see client.WatchSessions).
const pollEvery = 3 * time.Second

// connState is a stream connection's state as the status bars show it.
type connState = client.ConnState

// follow follows a session of b for the UI: each update with events is
// one step for onStep. A Reset becomes resetEvent ahead of the update's
// events, so that it travels in the event order. States pass through to
// onState, and Synced says live.
func follow(ctx context.Context, b client.Backend, id string, onStep func([]events.Event), onState func(connState)) error {
	live := false
	follow := func(ctx context.Context, on func(client.Step)) error {
		return b.Follow(ctx, id, func(u client.Update) { on(client.Step{Update: u}) })
	}
	return client.FollowSame(ctx, b, events.Task{ID: id}, follow, func(s client.Step) {
		u := s.Update
		evs := u.Events
		if u.Reset {
			evs = append([]events.Event{resetEvent()}, evs...)
		}
		if len(evs) > 0 {
			onStep(evs)
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
			onState(connState{Phase: sse.PhaseLive, Since: time.Now()})
		}
	})
}

// streamSource says which stream a batch came from.
type streamSource uint8

const (
	srcDaemon streamSource = iota // the task list (client.WatchSessions)
	srcTask
)

// streamBatchMsg carries the events and the latest connection state a
// stream gathered during one frame. Gen tells batches of an earlier attach
// (already cancelled, maybe still draining) apart.
type streamBatchMsg struct {
	Src    streamSource
	Gen    uint64
	Events eventChunks
	// Tasks is the latest task list (srcDaemon), nil when it did not
	// change.
	Tasks []events.Task
	State *connState // nil when the state did not change
	// Ended is set once, when the stream function returned; Err is why.
	Ended bool
	Err   error
	// Behind: the batch was cut by its size (batchBytesMax), so the
	// stream is ahead of the UI and more is already waiting.
	Behind bool
}

// eventChunks are events in order, in chunks: a replay's tens of
// thousands of events are gathered without growing one slice (each
// regrowth copied the batch whole into fresh memory, and page faults on
// that memory cost a third of the UI's processor time attaching to a
// 20,000-frame Suna run).
type eventChunks [][]events.Event

// chunksOf is evs as one chunk.
func chunksOf(evs []events.Event) eventChunks {
	if len(evs) == 0 {
		return nil
	}
	return eventChunks{evs}
}

// Len is the number of events.
func (c eventChunks) Len() int {
	n := 0
	for _, ch := range c {
		n += len(ch)
	}
	return n
}

// All yields the events in order.
func (c eventChunks) All() iter.Seq[*events.Event] {
	return func(yield func(*events.Event) bool) {
		for _, ch := range c {
			for i := range ch {
				if !yield(&ch[i]) {
					return
				}
			}
		}
	}
}

// chunkMax bounds a chunk (about 400 KB of events); chunks start small,
// as a live stream hands over a few events per frame, and double.
const chunkMin, chunkMax = 16, 1024

// add appends a copy of evs (the caller may reuse its slice).
func (c *eventChunks) add(evs []events.Event) {
	for len(evs) > 0 {
		n := len(*c)
		if n == 0 || len((*c)[n-1]) == cap((*c)[n-1]) {
			size := chunkMin
			if n > 0 {
				size = min(2*cap((*c)[n-1]), chunkMax)
			}
			*c = append(*c, make([]events.Event, 0, max(size, min(len(evs), chunkMax))))
			n++
		}
		last := (*c)[n-1]
		k := min(len(evs), cap(last)-len(last))
		(*c)[n-1] = append(last, evs[:k]...)
		evs = evs[k:]
	}
}

// streamControl is how the model asks for streams without doing IO itself:
// Watch only records the wish; the hub's goroutine does the rest.
type streamControl interface {
	// WatchTask streams taskID's events with the given generation, ending
	// the previous task stream; "" ends it without starting another.
	WatchTask(gen uint64, taskID string)
}

// batchBytesMax bounds the texts a batch holds (eventBytes): a batch
// that reaches it goes to the UI at once, and the stream waits until it
// has (backpressure). Without the bound a day-long replay, read and
// decoded faster than the UI applies it, piled up in the batcher for
// up to batchMaxHold: some 200 MB of events on the heap at once.
const batchBytesMax = 2 << 20

// eventBytes is about what an event holds on the heap: its texts, and a
// little for the rest.
func eventBytes(ev *events.Event) int { return 256 + ev.TextBytes() }

// batcher gathers what a stream hands over (decoded events, the task
// list, connection states) and the flusher hands it to the UI in batches,
// at most once per frameInterval. Nothing waits for the UI but the
// flusher: what arrives meanwhile piles up and goes out together, so the
// stream's goroutine (the backend's decoder) waits for a frame only when
// a batch is full (batchBytesMax).
type batcher struct {
	mu sync.Mutex
	// Handed over, not yet handed to the UI; nevs counts evs, size their
	// eventBytes.
	evs   eventChunks
	nevs  int
	size  int
	tasks []events.Task
	state *connState
	ended bool
	err   error
	// sending: a full batch was taken and the UI has not received it
	// yet; the stream waits for it as for a full batch.
	sending bool
	last    time.Time // when the stream last added something
	// stall is the longest recent pause between events (see burstQuiet).
	stall time.Duration

	kick chan struct{} // cap 1: wakes the flusher
	// settle (cap 1) wakes a flusher holding a batch: the batch is full.
	settle chan struct{}
	// taken (cap 1) wakes a stream waiting for a full batch to go.
	taken  chan struct{}
	closed chan struct{}
}

func newBatcher() *batcher {
	return &batcher{kick: make(chan struct{}, 1), settle: make(chan struct{}, 1),
		taken: make(chan struct{}, 1), closed: make(chan struct{})}
}

func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// onStep is the task stream's callback for each step: its events, in
// order. It waits while the batch is full (backpressure).
func (b *batcher) onStep(evs []events.Event) {
	if len(evs) == 0 {
		return
	}
	size := 0
	for i := range evs {
		size += eventBytes(&evs[i])
	}
	now := time.Now()
	b.mu.Lock()
	b.evs.add(evs)
	b.nevs += len(evs)
	b.size += size
	full := b.size >= batchBytesMax
	// The longest recent pause, half forgotten after some 700 events.
	b.stall -= b.stall / 1024
	if gap := now.Sub(b.last); gap >= stallMin && gap < stallMax {
		b.stall = max(b.stall, gap)
	}
	b.last = now
	b.mu.Unlock()
	poke(b.kick)
	if full {
		poke(b.settle)
	}
	if full {
		b.waitRoom()
	}
}

// waitRoom waits until the full batch reached the UI (or the flusher
// ended).
func (b *batcher) waitRoom() {
	for {
		b.mu.Lock()
		full := b.size >= batchBytesMax || b.sending
		b.mu.Unlock()
		if !full {
			return
		}
		select {
		case <-b.taken:
		case <-b.closed:
			return
		}
	}
}

// burstWindow is the quiet window within a burst.
func (b *batcher) burstWindow() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return min(max(burstQuiet, b.stall*3/2), burstQuietMax)
}

// onTasks is the task list's callback: the latest list replaces any not
// yet handed over.
func (b *batcher) onTasks(ts []events.Task) {
	if ts == nil {
		ts = []events.Task{}
	}
	b.mu.Lock()
	b.tasks = ts
	b.last = time.Now()
	b.mu.Unlock()
	poke(b.kick)
}

func (b *batcher) onState(s connState) {
	b.mu.Lock()
	b.state = &s
	b.last = time.Now()
	b.mu.Unlock()
	poke(b.kick)
}

// end records that the stream returned; what it handed over before is
// delivered first.
func (b *batcher) end(err error) {
	b.mu.Lock()
	b.ended, b.err = true, err
	b.last = time.Now()
	b.mu.Unlock()
	poke(b.kick)
}

func (b *batcher) take() streamBatchMsg {
	b.mu.Lock()
	defer b.mu.Unlock()
	msg := streamBatchMsg{Events: b.evs, Tasks: b.tasks, State: b.state, Ended: b.ended, Err: b.err,
		Behind: b.size >= batchBytesMax}
	b.sending = msg.Behind
	b.evs, b.nevs, b.size, b.tasks, b.state = nil, 0, 0, nil, nil
	return msg
}

// sent records that the UI received the batch take returned.
func (b *batcher) sent() {
	b.mu.Lock()
	b.sending = false
	b.mu.Unlock()
	poke(b.taken)
}

// flush hands batches to the UI until ctx ends or the stream ended and
// everything was delivered. send may block (the UI is busy); events that
// arrive meanwhile go out together in the next batch.
func (b *batcher) flush(ctx context.Context, src streamSource, gen uint64, send func(tea.Msg)) {
	defer close(b.closed)

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
	// hold sleeps as sleep does, or until the batch is full (a stale wake
	// only makes the caller look again).
	holdFor := func(d time.Duration) bool {
		timer.Reset(d)
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
		case <-b.settle:
			timer.Stop()
		}
		return true
	}
	hold := batchFirstHold
	// burst: a burst is coming in (see burstEvents); it is over once the
	// stream has added nothing for stallMax.
	burst := false
	over := func() {
		hold, burst = batchFirstHold, false
		b.mu.Lock()
		b.stall = 0
		b.mu.Unlock()
	}
	idle := time.NewTimer(stallMax)
	defer idle.Stop()
	for {
		var idleC <-chan time.Time
		if burst {
			idle.Reset(stallMax)
			idleC = idle.C
		}
		select {
		case <-ctx.Done():
			return
		case <-idleC:
			over()
			continue
		case <-b.kick:
		}
		// Hold the batch while a burst goes on (see batchQuiet).
		held := time.Now()
		for {
			b.mu.Lock()
			last, ended, n, full := b.last, b.ended, b.nevs, b.size >= batchBytesMax
			b.mu.Unlock()
			if ended || full {
				break
			}
			burst = burst || n >= burstEvents
			now := time.Now()
			quiet := batchQuiet - now.Sub(last)
			if burst {
				quiet = b.burstWindow() - now.Sub(last)
			}
			if quiet <= 0 {
				if !burst {
					over()
				}
				break
			}
			if now.Sub(held) >= hold {
				hold = min(2*hold, batchMaxHold)
				break
			}
			if !holdFor(min(quiet, hold-now.Sub(held))) {
				return
			}
		}
		start := time.Now()
		msg := b.take()
		msg.Src, msg.Gen = src, gen
		if len(msg.Events) > 0 || msg.Tasks != nil || msg.State != nil || msg.Ended {
			send(msg)
		}
		b.sent()
		if msg.Ended {
			return
		}
		// Hold the next batch back until the frame is over, unless this
		// one was cut by its size: the stream is waiting and the UI has
		// taken this one already.
		if msg.Behind {
			continue
		}
		if wait := frameInterval - time.Since(start); wait > 0 && !sleep(wait) {
			return
		}
	}
}

// streamHub owns every stream goroutine. The task list's watch runs for the
// program's whole life (the task list stays live while attached, so going
// back is instant); the task stream follows WatchTask.
type streamHub struct {
	ctx  context.Context
	b    client.Backend
	reqs chan watchReq
	done chan struct{}
	// outbox reports changes of a task's outbox by anyone (nil: the store
	// cannot tell); set before start.
	outbox func(ctx context.Context, taskID string) <-chan struct{}
	// onSessions gets every list of b's sessions (Config.OnSessions);
	// set before start.
	onSessions func([]events.Task)
}

type watchReq struct {
	gen    uint64
	taskID string
	// b and outbox, when set, are the task's source's (the board's);
	// else the hub's own.
	b      client.Backend
	outbox func(ctx context.Context, taskID string) <-chan struct{}
}

// sourceControl is a streamControl that follows a task of another
// backend than the one it started with: the board opens each session
// through its own source's.
type sourceControl interface {
	WatchTaskOn(gen uint64, b client.Backend, outbox func(ctx context.Context, taskID string) <-chan struct{}, taskID string)
}

// WatchTaskOn is WatchTask through b, the task's outbox watched by
// outbox.
func (h *streamHub) WatchTaskOn(gen uint64, b client.Backend, outbox func(ctx context.Context, taskID string) <-chan struct{}, taskID string) {
	select {
	case <-h.reqs:
	default:
	}
	h.reqs <- watchReq{gen: gen, taskID: taskID, b: b, outbox: outbox}
}

func newStreamHub(ctx context.Context, b client.Backend) *streamHub {
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

	if h.b != nil { // nil on the board: board.Board watches every source's list
		run(h.ctx, srcDaemon, 0, func(ctx context.Context, bt *batcher) error {
			onTasks := bt.onTasks
			if h.onSessions != nil {
				onTasks = func(ts []events.Task) {
					h.onSessions(ts)
					bt.onTasks(ts)
				}
			}
			return client.WatchSessions(ctx, h.b, pollEvery, onTasks, bt.onState)
		})
	}

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
			b, watchOutbox := h.b, h.outbox
			if r.b != nil {
				b, watchOutbox = r.b, r.outbox
			}
			if watchOutbox != nil {
				if ch := watchOutbox(ctx, id); ch != nil {
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
				return follow(ctx, b, id, bt.onStep, bt.onState)
			})
		}
	}
}
