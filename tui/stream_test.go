package tui

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// sink records what a batcher hands to the UI.
type sink struct {
	mu   sync.Mutex
	msgs []streamBatchMsg
	at   []time.Time
}

func (s *sink) send(m tea.Msg) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, m.(streamBatchMsg))
	s.at = append(s.at, time.Now())
}

func (s *sink) snapshot() ([]streamBatchMsg, []time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]streamBatchMsg(nil), s.msgs...), append([]time.Time(nil), s.at...)
}

func TestBatcherCoalescesToOnePerFrame(t *testing.T) {
	defer goleak.VerifyNone(t)
	evs := decodeAll(wireFrames(3000))
	bt := newBatcher()
	var s sink
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		bt.flush(ctx, srcTask, 7, s.send)
	}()
	start := time.Now()
	for i, ev := range evs {
		bt.onEvent(ev)
		if i%300 == 0 {
			bt.onState(connState{Phase: sse.PhaseLive})
			time.Sleep(10 * time.Millisecond) // a bursty stream
		}
	}
	bt.end(nil)
	<-done
	elapsed := time.Since(start)
	msgs, at := s.snapshot()
	total := 0
	for i, m := range msgs {
		if m.Gen != 7 {
			t.Fatalf("batch %d has gen %d src %d", i, m.Gen, m.Src)
		}
		j := 0
		for ev := range m.Events.All() {
			if want := evs[total+j].ID; ev.ID != want {
				t.Fatalf("event %d out of order: %q, want %q", total+j, ev.ID, want)
			}
			j++
		}
		total += m.Events.Len()
	}
	if total != len(evs) {
		t.Fatalf("delivered %d events, want %d", total, len(evs))
	}
	if !msgs[len(msgs)-1].Ended {
		t.Fatal("the last batch must say the stream ended")
	}
	if maxMsgs := int(elapsed/frameInterval) + 3; len(msgs) > maxMsgs {
		t.Fatalf("%d batches in %v: more than one per frame", len(msgs), elapsed)
	}
	for i := 1; i < len(at)-1; i++ { // the final (end) batch may follow at once
		if d := at[i].Sub(at[i-1]); d < frameInterval/2 {
			t.Fatalf("batches %d and %d only %v apart", i-1, i, d)
		}
	}
}

// A UI that does not read must never block the stream of a few events.
// (The batcher holds up to batchBytesMax, far more than 1,500 events; the
// generous deadline is for -race on a loaded 2-core CI machine.)
func TestBatcherNeverBlocksTheStream(t *testing.T) {
	defer goleak.VerifyNone(t)
	bt := newBatcher()
	release := make(chan struct{})
	blockedSend := func(tea.Msg) { <-release }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		bt.flush(ctx, srcTask, 1, blockedSend)
	}()
	// Unblock and stop the flusher however the test ends, so a failure
	// here can't leak into the goleak checks of the tests after it.
	stop := sync.OnceFunc(func() { close(release); cancel(); <-done })
	defer stop()
	evs := decodeAll(wireFrames(1500))
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		for _, ev := range evs {
			bt.onEvent(ev)
		}
		bt.onTasks([]events.Task{{ID: "a"}})
		bt.onState(connState{Phase: sse.PhaseLive})
	}()
	select {
	case <-fed:
	case <-time.After(60 * time.Second):
		t.Fatal("the stream callback blocked on a busy UI")
	}
	stop()
}

// A replay read faster than the UI applies it waits for the UI once a
// batch holds batchBytesMax, until the UI has received that batch, instead
// of piling up on the heap; every event still arrives, in order.
func TestBatcherHoldsAtMostAFullBatch(t *testing.T) {
	defer goleak.VerifyNone(t)
	bt := newBatcher()
	sends := make(chan streamBatchMsg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		bt.flush(ctx, srcTask, 1, func(m tea.Msg) {
			select {
			case sends <- m.(streamBatchMsg):
			case <-ctx.Done():
			}
		})
	}()
	defer func() { cancel(); <-done }()
	big := strings.Repeat("x", 1<<20)
	const n = 40 // five full batches
	fed := make(chan int, n)
	go func() {
		for i := range n {
			bt.onStep([]events.Event{{Kind: events.KindUserMessage, ID: strconv.Itoa(i), Text: big}})
			fed <- i
		}
	}()
	// The UI takes nothing: the stream stops once a full batch waits for
	// the UI (a second batch, filled meanwhile, held another 2 MB of a
	// replay in memory while the UI was busy with the first).
	per := batchBytesMax >> 20
	taken := 0
	for quiet := false; !quiet; {
		select {
		case <-fed:
			taken++
		case <-time.After(200 * time.Millisecond):
			quiet = true
		}
	}
	if taken > per {
		t.Fatalf("the stream handed over %d MB while the UI took nothing: more than a batch of %d MB", taken, per)
	}
	got := 0
	for got < n {
		m := <-sends
		if b := m.Events.Len(); b > per {
			t.Fatalf("a batch of %d MB events, more than batchBytesMax", b)
		}
		for ev := range m.Events.All() {
			if ev.ID != strconv.Itoa(got) {
				t.Fatalf("event %s, want %d", ev.ID, got)
			}
			got++
		}
	}
}

func TestHubFollowsTheViewAndStops(t *testing.T) {
	defer goleak.VerifyNone(t)
	var mu sync.Mutex
	live := map[string]bool{}
	b := &fakeBackend{
		follow: func(ctx context.Context, id string, on func(client.Update)) error {
			mu.Lock()
			live[id] = true
			mu.Unlock()
			on(stateUpdate(connState{Phase: sse.PhaseLive}))
			for _, ev := range decodeAll(wireFrames(3)) {
				on(eventUpdate(ev))
			}
			<-ctx.Done()
			mu.Lock()
			live[id] = false
			mu.Unlock()
			return ctx.Err()
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := newStreamHub(ctx, b)
	var s sink
	h.start(s.send)
	h.WatchTask(1, "a")
	waitFor(t, func() bool {
		msgs, _ := s.snapshot()
		for _, m := range msgs {
			if m.Src == srcTask && m.Gen == 1 && len(m.Events) > 0 {
				return true
			}
		}
		return false
	})
	h.WatchTask(2, "b")
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return !live["a"] && live["b"] })
	h.WatchTask(3, "")
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return !live["b"] })
	cancel()
	h.wait()
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// syncBuffer is an output the program writes from its own goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunEndToEnd runs the real program: a stream's events reach the
// transcript in batches off the Update path; ending ctx ends everything.
func TestRunEndToEnd(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := &fakeBackend{
		task: events.Task{ID: "task-1", Name: "e2e", Status: events.StatusIdle},
		follow: func(ctx context.Context, id string, on func(client.Update)) error {
			on(stateUpdate(connState{Phase: sse.PhaseLive}))
			for _, ev := range decodeAll(wireFrames(400)) {
				on(eventUpdate(ev))
			}
			<-ctx.Done()
			return ctx.Err()
		},
	}
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		m   *Model
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := run(ctx, b, Config{TaskID: "task-1", Theme: "dark", Getenv: func(string) string { return "" }},
			tea.WithInput(nil), tea.WithOutput(&out), tea.WithWindowSize(100, 30))
		done <- result{m, err}
	}()
	// The renderer writes cell diffs, so the output is not greppable for
	// whole lines: wait until it goes quiet, then look at the final model.
	waitFor(t, func() bool { return strings.Contains(ansi.Strip(out.String()), "live") })
	// (A whole second: under -race on a loaded machine the UI goroutine
	// can fall silent for a few hundred ms while batches still wait.)
	last, quiet := out.String(), time.Now()
	for time.Since(quiet) < time.Second {
		time.Sleep(20 * time.Millisecond)
		if cur := out.String(); cur != last {
			last, quiet = cur, time.Now()
		}
	}
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after ctx ended")
	}
	if r.err != nil {
		t.Fatalf("run: %v", r.err)
	}
	if n := r.m.tl.Len(); n != 300 {
		t.Fatalf("final timeline has %d items, want 300", n)
	}
	if v := ansi.Strip(r.m.View().Content); !strings.Contains(v, "question 396") {
		t.Fatalf("final screen lacks the last user turn:\n%s", v)
	}
}

// runFlusher starts bt's flusher into s and returns its stop.
func runFlusher(t *testing.T, bt *batcher, s *sink) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		bt.flush(ctx, srcTask, 1, s.send)
	}()
	return sync.OnceFunc(func() { cancel(); <-done })
}

func delivered(s *sink) (n int, batches int) {
	msgs, _ := s.snapshot()
	for _, m := range msgs {
		if m.Events.Len() > 0 {
			n += m.Events.Len()
			batches++
		}
	}
	return n, batches
}

// A replay arrives as a burst: it is handed over in a few large batches
// (not one per frame), and its last event goes out once the burst is
// over, without waiting for the stream to end.
func TestBatcherHandsABurstOverInFewBatches(t *testing.T) {
	defer goleak.VerifyNone(t)
	frames := decodeAll(wireFrames(4000))
	bt := newBatcher()
	var s sink
	stop := runFlusher(t, bt, &s)
	defer stop()
	start := time.Now()
	bt.onState(connState{Phase: sse.PhaseLive})
	for _, ev := range frames {
		bt.onEvent(ev)
		// A decoder's pace (about 30 µs a frame on a quiet machine).
		spin(30 * time.Microsecond)
	}
	waitFor(t, func() bool { n, _ := delivered(&s); return n == len(frames) })
	elapsed := time.Since(start)
	_, batches := delivered(&s)
	// The holds double from batchFirstHold: a burst of d gets at most
	// about log2(d/batchFirstHold)+2 batches, one per frame would be
	// d/frameInterval.
	if perFrame := int(elapsed / frameInterval); batches > 8 && batches*2 > perFrame {
		t.Fatalf("%d batches in %v: the burst was not held together", batches, elapsed)
	}
	msgs, _ := s.snapshot()
	if msgs[len(msgs)-1].Ended {
		t.Fatal("the stream has not ended")
	}
}

// The task list: the latest list wins over one not yet handed over, and
// states and the end go out with it.
func TestBatcherTaskListLatestWins(t *testing.T) {
	defer goleak.VerifyNone(t)
	bt := newBatcher()
	bt.onState(connState{Phase: sse.PhaseLive})
	bt.onTasks([]events.Task{{ID: "a"}})
	bt.onTasks([]events.Task{{ID: "a"}, {ID: "b"}})
	bt.onTasks(nil) // an empty list is a list, not "no change"
	bt.onTasks([]events.Task{{ID: "b"}})
	bt.end(nil)
	var s sink
	stop := runFlusher(t, bt, &s)
	defer stop()
	waitFor(t, func() bool { msgs, _ := s.snapshot(); return len(msgs) > 0 && msgs[len(msgs)-1].Ended })
	msgs, _ := s.snapshot()
	if len(msgs) != 1 {
		t.Fatalf("%d batches, want the one", len(msgs))
	}
	m := msgs[0]
	if len(m.Tasks) != 1 || m.Tasks[0].ID != "b" || m.State == nil || m.State.Phase != sse.PhaseLive {
		t.Fatalf("batch %+v", m)
	}
	// Nothing new: no list in the next batch.
	bt2 := newBatcher()
	bt2.onTasks(nil)
	if got := bt2.take().Tasks; got == nil || len(got) != 0 {
		t.Fatalf("an empty list became %v", got)
	}
	if got := bt2.take().Tasks; got != nil {
		t.Fatalf("a batch without a new list carries %v", got)
	}
}

// The hub runs the task list's watch for the program's life and hands its
// lists and states over as srcDaemon batches.
func TestHubWatchesTheTaskList(t *testing.T) {
	defer goleak.VerifyNone(t)
	lists := make(chan []events.Task)
	b := &fakeBackend{
		watchTasks: func(ctx context.Context, onTasks func([]events.Task), onState func(connState)) error {
			onState(connState{Phase: sse.PhaseLive})
			for {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case ts := <-lists:
					onTasks(ts)
				}
			}
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := newStreamHub(ctx, b)
	var s sink
	h.start(s.send)
	last := func() (ids []string, live bool) {
		msgs, _ := s.snapshot()
		for _, m := range msgs {
			if m.Src != srcDaemon {
				continue
			}
			if m.State != nil {
				live = m.State.Phase == sse.PhaseLive
			}
			if m.Tasks != nil {
				ids = ids[:0]
				for _, t := range m.Tasks {
					ids = append(ids, t.ID)
				}
			}
		}
		return ids, live
	}
	lists <- []events.Task{{ID: "x"}, {ID: "y"}}
	waitFor(t, func() bool { ids, live := last(); return live && strings.Join(ids, ",") == "x,y" })
	lists <- []events.Task{{ID: "y"}}
	waitFor(t, func() bool { ids, _ := last(); return strings.Join(ids, ",") == "y" })
	cancel()
	h.wait()
}

// spin busy-waits for d, the way a decoder spends its time (a sleep would
// hand the processor to the flusher).
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// A burst's longer quiet window is remembered while the burst goes on and
// forgotten once the stream has been idle for stallMax: a pause of the
// decoder raises the window, and the next lone event is a live delta
// again (batchQuiet).
func TestBatcherBurstWindowFollowsPauses(t *testing.T) {
	defer goleak.VerifyNone(t)
	evs := decodeAll(wireFrames(400))
	bt := newBatcher()
	var s sink
	stop := runFlusher(t, bt, &s)
	defer stop()
	for _, ev := range evs[:200] {
		bt.onEvent(ev)
	}
	time.Sleep(40 * time.Millisecond) // the decoder descheduled
	for _, ev := range evs[200:] {
		bt.onEvent(ev)
	}
	if w := bt.burstWindow(); w < 30*time.Millisecond || w > burstQuietMax {
		t.Fatalf("window %v after a 40 ms pause: want about 1.5 times it", w)
	}
	waitFor(t, func() bool { n, _ := delivered(&s); return n == len(evs) })
	waitFor(t, func() bool { return bt.burstWindow() == burstQuiet }) // idle: the burst is over
}

// A burst followed by quiet (a replay, then a session waiting for its
// user) reaches the UI whole, and soon after its last event: the batch is
// not held for a frame that is not coming.
func TestBatcherBurstThenQuietArrivesWhole(t *testing.T) {
	defer goleak.VerifyNone(t)
	evs := decodeAll(wireFrames(2000))
	bt := newBatcher()
	var s sink
	stop := runFlusher(t, bt, &s)
	defer stop()
	for _, ev := range evs {
		bt.onStep([]events.Event{ev})
	}
	last := time.Now()
	waitFor(t, func() bool { n, _ := delivered(&s); return n == len(evs) })
	msgs, at := s.snapshot()
	if took := at[len(at)-1].Sub(last); took > burstQuietMax+batchMaxHold {
		t.Errorf("the burst's last event went out %v after its step", took)
	}
	i := 0
	for _, m := range msgs {
		for ev := range m.Events.All() {
			if ev.ID != evs[i].ID {
				t.Fatalf("event %d is %q, want %q", i, ev.ID, evs[i].ID)
			}
			i++
		}
	}
}

// One live event (a streamed delta, a tool's start) after a quiet time is
// on its way to the screen promptly, within a few frames.
func TestBatcherLiveEventGoesOutPromptly(t *testing.T) {
	defer goleak.VerifyNone(t)
	evs := decodeAll(wireFrames(3))
	bt := newBatcher()
	var s sink
	stop := runFlusher(t, bt, &s)
	defer stop()
	for i, ev := range evs {
		sent := time.Now()
		bt.onStep([]events.Event{ev})
		waitFor(t, func() bool { n, _ := delivered(&s); return n == i+1 })
		_, at := s.snapshot()
		if took := at[len(at)-1].Sub(sent); took > 5*frameInterval {
			t.Errorf("live event %d went out %v after its step", i, took)
		}
	}
}

// eventChunks keeps the events in order, copies them (the caller may
// reuse its slice), starts small and never grows a chunk past chunkMax.
func TestEventChunks(t *testing.T) {
	t.Parallel()
	var c eventChunks
	buf := make([]events.Event, 0, 3000)
	want := 0
	for _, n := range []int{1, 2, 0, 5, 40, 3000, 7, 1500} {
		buf = buf[:0]
		for i := range n {
			buf = append(buf, events.Event{ID: strconv.Itoa(want + i)})
		}
		c.add(buf)
		want += n
		for i := range buf {
			buf[i].ID = "reused" // the caller's slice, reused
		}
	}
	if c.Len() != want {
		t.Fatalf("Len %d, want %d", c.Len(), want)
	}
	i := 0
	for ev := range c.All() {
		if ev.ID != strconv.Itoa(i) {
			t.Fatalf("event %d is %q", i, ev.ID)
		}
		i++
	}
	if cap(c[0]) != chunkMin {
		t.Errorf("first chunk holds %d events, want %d", cap(c[0]), chunkMin)
	}
	for k, ch := range c {
		if cap(ch) > chunkMax {
			t.Errorf("chunk %d holds %d events, more than %d", k, cap(ch), chunkMax)
		}
	}
	if chunksOf(nil) != nil || chunksOf([]events.Event{{ID: "x"}}).Len() != 1 {
		t.Error("chunksOf")
	}
}
