package tui

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/memlimit"
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
	frames := wireFrames(3000)
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
	for i, f := range frames {
		bt.onFrame(f)
		if i%300 == 0 {
			bt.onState(connState{Phase: client.PhaseLive})
			time.Sleep(10 * time.Millisecond) // a bursty stream
		}
	}
	// A reconnect replays the log: the batcher's decoder drops the repeats.
	bt.onState(connState{Phase: client.PhaseLive})
	for _, f := range frames[:100] {
		bt.onFrame(f)
	}
	bt.end(nil)
	<-done
	elapsed := time.Since(start)
	msgs, at := s.snapshot()
	total := 0
	for i, m := range msgs {
		if m.Gen != 7 || m.Src != srcTask {
			t.Fatalf("batch %d has gen %d src %d", i, m.Gen, m.Src)
		}
		for j, ev := range m.Events {
			want := events.Decode(frames[total+j]).ID
			if ev.ID != want {
				t.Fatalf("event %d out of order: %q, want %q", total+j, ev.ID, want)
			}
		}
		total += len(m.Events)
	}
	if total != len(frames) {
		t.Fatalf("delivered %d events, want %d", total, len(frames))
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

// A UI that does not read must never block the stream reader. (The batcher
// buffers without bound, so 1,500 frames prove it as well as more would;
// the generous deadline is for -race on a loaded 2-core CI machine.)
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
	frames := wireFrames(1500)
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		for _, f := range frames {
			bt.onFrame(f)
		}
	}()
	select {
	case <-fed:
	case <-time.After(60 * time.Second):
		t.Fatal("the stream callback blocked on a busy UI")
	}
	stop()
}

func TestHubFollowsTheViewAndStops(t *testing.T) {
	defer goleak.VerifyNone(t)
	var mu sync.Mutex
	live := map[string]bool{}
	b := &fakeBackend{
		streamTask: func(ctx context.Context, id string, onFrame func(events.Frame), onState func(connState)) error {
			mu.Lock()
			live[id] = true
			mu.Unlock()
			onState(connState{Phase: client.PhaseLive})
			for _, f := range wireFrames(3) {
				onFrame(f)
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

// TestRunEndToEnd runs the real program: streams decode frames off the
// Update path and the transcript shows them; ending ctx ends everything.
func TestRunEndToEnd(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := &fakeBackend{
		task: events.Task{ID: "task-1", Name: "e2e", Status: events.StatusIdle},
		streamTask: func(ctx context.Context, id string, onFrame func(events.Frame), onState func(connState)) error {
			onState(connState{Phase: client.PhaseLive})
			for _, f := range wireFrames(400) {
				onFrame(f)
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
		if len(m.Events) > 0 {
			n += len(m.Events)
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
	frames := wireFrames(4000)
	bt := newBatcher()
	var s sink
	stop := runFlusher(t, bt, &s)
	defer stop()
	start := time.Now()
	bt.onState(connState{Phase: client.PhaseLive})
	for _, f := range frames {
		bt.onFrame(f)
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

// A reconnect's state goes through the decoder in order: the frames the
// new connection replays are dropped, the new ones after them kept.
func TestBatcherReconnectDropsTheReplay(t *testing.T) {
	defer goleak.VerifyNone(t)
	frames := wireFrames(40)
	bt := newBatcher()
	var s sink
	stop := runFlusher(t, bt, &s)
	defer stop()
	bt.onState(connState{Phase: client.PhaseLive})
	for _, f := range frames[:30] {
		bt.onFrame(f)
	}
	bt.onState(connState{Phase: client.PhaseReconnecting})
	bt.onState(connState{Phase: client.PhaseLive})
	for _, f := range frames { // the replay, then 10 new ones
		bt.onFrame(f)
	}
	bt.end(nil)
	waitFor(t, func() bool { msgs, _ := s.snapshot(); return len(msgs) > 0 && msgs[len(msgs)-1].Ended })
	msgs, _ := s.snapshot()
	var ids []string
	for _, m := range msgs {
		for _, ev := range m.Events {
			ids = append(ids, ev.ID)
		}
	}
	if len(ids) != len(frames) {
		t.Fatalf("%d events delivered, want %d (each frame once)", len(ids), len(frames))
	}
	for i, f := range frames {
		if want := events.Decode(f).ID; ids[i] != want {
			t.Fatalf("event %d is %q, want %q", i, ids[i], want)
		}
	}
}

// A reader waiting for queue space (the decoder is behind) is released
// when the stream is torn down, so no goroutine is left behind.
func TestBatcherFullQueueReleasesTheReaderOnStop(t *testing.T) {
	defer goleak.VerifyNone(t)
	bt := newBatcher()
	big := events.Frame{Name: "maria", Data: make([]byte, rawQueueMax+1)}
	bt.onFrame(big) // fills the queue; no decoder runs yet
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		bt.onFrame(big) // waits for space
	}()
	select {
	case <-fed:
		t.Fatal("the reader did not wait for a full queue")
	case <-time.After(50 * time.Millisecond):
	}
	var s sink
	stop := runFlusher(t, bt, &s)
	stop() // the decoder may drain the queue or stop: either releases it
	select {
	case <-fed:
	case <-time.After(10 * time.Second):
		t.Fatal("the reader is still waiting after the stream stopped")
	}
}

// When the UI owns its process, a task's replay lowers the soft memory
// limit to about the bytes read while it comes in, and the process's own
// limit is back once the burst is over.
func TestBatcherBoundsMemoryWhileAReplayComesIn(t *testing.T) {
	defer goleak.VerifyNone(t)
	const outer = 1 << 40
	prev := debug.SetMemoryLimit(outer)
	defer debug.SetMemoryLimit(prev)
	frames := wireFrames(3000)
	bt := newBatcher()
	bt.mem = memlimit.Start(bt.read.Load, outer)
	var s sink
	stop := runFlusher(t, bt, &s)
	defer stop()
	var lowest int64 = outer
	bt.onState(connState{Phase: client.PhaseLive})
	var total int64
	for _, f := range frames {
		bt.onFrame(f)
		total += int64(len(f.Data))
		lowest = min(lowest, memlimit.Current())
	}
	waitFor(t, func() bool { n, _ := delivered(&s); return n == len(frames) })
	if lowest >= outer {
		t.Fatal("the limit was never lowered while the replay came in")
	}
	if lowest < memlimit.Floor {
		t.Fatalf("limit %d: below the floor", lowest)
	}
	waitFor(t, func() bool { return memlimit.Current() == outer })
	if read := bt.read.Load(); read != total {
		t.Fatalf("counted %d bytes, want %d", read, total)
	}
}
