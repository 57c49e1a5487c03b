package tui

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// isKicking reports whether the gate's ticker ticks at a kick's pace.
func (g *renderGate) isKicking() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.kicking
}

func (g *renderGate) hasTicker() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ticker != nil
}

// countTicks counts what a ticker delivers until stop is closed, the way
// Bubble Tea's renderer goroutine consumes it.
func countTicks(t *time.Ticker, n *atomic.Int64, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			n.Add(1)
		}
	}
}

// kickingGate is a gate over a ticker of interval whose ticks are counted
// in n, kicking every millisecond for kickFor; both end with the test.
func kickingGate(t *testing.T, interval, kickFor time.Duration) (g *renderGate, n *atomic.Int64) {
	t.Helper()
	tk := time.NewTicker(interval)
	n = new(atomic.Int64)
	stop := make(chan struct{})
	go countTicks(tk, n, stop)
	g = &renderGate{
		find:      func() (*time.Ticker, bool) { return tk, true },
		interval:  interval,
		idle:      time.Hour,
		kickEvery: time.Millisecond,
		kickFor:   kickFor,
	}
	t.Cleanup(func() {
		g.close()
		close(stop)
		tk.Stop()
	})
	return g, n
}

func TestRenderGateStopsAndRestartsTheTicker(t *testing.T) {
	tk := time.NewTicker(2 * time.Millisecond)
	defer tk.Stop()
	var n atomic.Int64
	stop := make(chan struct{})
	defer close(stop)
	go countTicks(tk, &n, stop)

	g := &renderGate{
		find:     func() (*time.Ticker, bool) { return tk, true },
		interval: 2 * time.Millisecond,
		idle:     40 * time.Millisecond,
	}
	defer g.close()
	g.viewed(true)
	waitFor(t, func() bool { return n.Load() > 3 })

	// No view for a while: the ticker stops and stays stopped.
	waitFor(t, func() bool { return !g.ticking() })
	before := n.Load()
	time.Sleep(100 * time.Millisecond)
	if got := n.Load(); got > before+1 { // one tick may have been in flight
		t.Fatalf("the ticker still ticks while idle: %d ticks", got-before)
	}

	// A new view starts it again.
	g.viewed(true)
	if !g.ticking() {
		t.Fatal("a view must restart the ticker")
	}
	after := n.Load()
	waitFor(t, func() bool { return n.Load() > after+3 })

	// Views that keep coming keep it ticking past the idle time.
	deadline := time.Now().Add(150 * time.Millisecond)
	for time.Now().Before(deadline) {
		g.viewed(true)
		viewedAt := time.Now()
		time.Sleep(5 * time.Millisecond)
		// On a loaded machine the sleep can outlast the idle time; only a
		// stop within it is wrong.
		if !g.ticking() && time.Since(viewedAt) < g.idle {
			t.Fatal("the ticker stopped while views kept coming")
		}
	}
}

// TestRenderGateKicksALoneView: a view after a pause is flushed at once,
// not at the next regular tick; views closer together than a frame do not
// kick again; after the kick the ticker is back at the frame interval.
func TestRenderGateKicksALoneView(t *testing.T) {
	const interval = 400 * time.Millisecond // far longer than any kick
	g, n := kickingGate(t, interval, 5*time.Millisecond)
	start := time.Now()
	g.viewed(true)
	waitFor(t, func() bool { return n.Load() > 0 })
	if took := time.Since(start); took >= interval {
		t.Fatalf("the first tick after a lone view came after %v, a whole frame interval", took)
	}
	g.mu.Lock()
	seq := g.kickSeq
	g.mu.Unlock()
	g.viewed(true) // within the frame: no second kick
	g.mu.Lock()
	again := g.kickSeq
	g.mu.Unlock()
	if again != seq {
		t.Fatal("a view within a frame of the last kick kicked again: the frame rate is no longer capped")
	}
	// Back at the frame interval: over 300 ms a 1 ms ticker would tick
	// hundreds of times, the 400 ms one at most once.
	waitFor(t, func() bool { return !g.isKicking() })
	before := n.Load()
	time.Sleep(300 * time.Millisecond)
	if got := n.Load() - before; got > 2 {
		t.Fatalf("%d ticks in 300 ms after the kick: the frame interval was not put back", got)
	}
}

func TestRenderGateWithoutTickerDoesNothing(t *testing.T) {
	g := &renderGate{find: func() (*time.Ticker, bool) { return nil, false }, interval: time.Millisecond, idle: time.Millisecond}
	g.viewed(true)
	g.viewed(true)
	if g.ticking() || g.stopper != nil {
		t.Fatal("a Bubble Tea without the ticker field must be left alone")
	}
}

// TestRenderGateInTheRealProgram runs the real program: Bubble Tea's ticker
// is found, stops once the screen settles, and a later event still reaches
// the screen.
func TestRenderGateInTheRealProgram(t *testing.T) {
	more := make(chan struct{})
	b := &fakeBackend{
		task: events.Task{ID: "task-1", Name: "gate", Status: events.StatusIdle},
		follow: func(ctx context.Context, id string, on func(backend.Update)) error {
			on(stateUpdate(connState{Phase: sse.PhaseLive}))
			for _, ev := range decodeAll(wireFrames(8)) {
				on(eventUpdate(ev))
			}
			select {
			case <-more:
			case <-ctx.Done():
				return ctx.Err()
			}
			on(eventUpdate(events.Event{Kind: events.KindUserMessage, ID: "late", Text: "a late question"}))
			<-ctx.Done()
			return ctx.Err()
		},
	}
	gates := make(chan *renderGate, 1)
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := run(ctx, b, Config{TaskID: "task-1", Theme: "dark", Getenv: func(string) string { return "" },
			observeGate: func(g *renderGate) { gates <- g }},
			tea.WithInput(nil), tea.WithOutput(&out), tea.WithWindowSize(100, 30))
		done <- err
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("run did not return")
		}
	}()
	g := <-gates
	waitFor(t, func() bool { return strings.Contains(ansi.Strip(out.String()), "live") })
	if !g.hasTicker() {
		t.Fatal("the gate did not find Bubble Tea's renderer ticker (tea.Program changed?): an idle perch would wake 60 times a second")
	}
	waitFor(t, func() bool { return !g.ticking() })

	close(more)
	waitFor(t, func() bool { return strings.Contains(ansi.Strip(out.String()), "a late question") })
}

// TestRenderGateKickEndsWhenTheFrameIsWritten: the renderer's write ends a
// kick within renderKickAfterWrite (the burst of quick ticks lasts until
// the frame is out, not the whole kickFor), and a view that changed
// nothing kicks nothing.
func TestRenderGateKickEndsWhenTheFrameIsWritten(t *testing.T) {
	const interval = 400 * time.Millisecond
	g, n := kickingGate(t, interval, time.Hour) // only the write ends this kick
	g.viewed(true)
	waitFor(t, func() bool { return n.Load() > 0 })
	if !g.isKicking() {
		t.Fatal("a lone view did not kick")
	}
	out := &gateOutput{File: devNull(t), gate: g}
	written := time.Now()
	if _, err := out.Write([]byte("frame")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return !g.isKicking() })
	if took := time.Since(written); took > time.Second {
		t.Fatalf("the kick went on %v after the frame was written", took)
	}
	before := n.Load()
	time.Sleep(100 * time.Millisecond)
	if got := n.Load() - before; got > 1 {
		t.Fatalf("%d ticks in 100 ms after the write: the frame interval was not put back", got)
	}

	// A frame interval later, a view that changed nothing does not kick.
	g.mu.Lock()
	g.kicked = time.Now().Add(-2 * interval)
	seq := g.kickSeq
	g.mu.Unlock()
	g.viewed(false)
	g.mu.Lock()
	again := g.kickSeq
	g.mu.Unlock()
	if again != seq {
		t.Fatal("an unchanged view kicked the ticker")
	}
	g.viewed(true)
	if !g.isKicking() {
		t.Fatal("a changed view a frame interval later did not kick")
	}
}

// TestRenderGateLateFrameKeepsTicking: a kick whose frame has not been
// written when kickFor is up (a starved renderer) goes on ticking every
// renderKickLate instead of dropping to the frame interval, until the write
// ends it, or a frame interval after the kick.
func TestRenderGateLateFrameKeepsTicking(t *testing.T) {
	const interval = 400 * time.Millisecond
	g, n := kickingGate(t, interval, 2*time.Millisecond)
	kicked := time.Now()
	g.viewed(true)
	time.Sleep(20 * time.Millisecond) // kickFor is long past; nothing was written
	if !g.isKicking() {
		t.Fatal("the kick ended without the frame written, well within a frame interval")
	}
	before := n.Load()
	time.Sleep(30 * time.Millisecond)
	if got := n.Load() - before; got < 5 {
		t.Fatalf("%d ticks in 30 ms of a late frame's kick: the renderer is left to the frame interval", got)
	}
	out := &gateOutput{File: devNull(t), gate: g}
	if _, err := out.Write([]byte("frame")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return !g.isKicking() })
	if took := time.Since(kicked); took >= interval {
		t.Fatalf("the write did not end the late kick (it ended %v after the kick)", took)
	}

	// Never written: the kick ends a frame interval after it began.
	g.mu.Lock()
	g.kicked = time.Now().Add(-2 * interval)
	g.mu.Unlock()
	kicked = time.Now()
	g.viewed(true)
	waitFor(t, func() bool { return !g.isKicking() })
	if took := time.Since(kicked); took < interval-50*time.Millisecond {
		t.Fatalf("a kick without a write ended after %v, before a frame interval (%v)", took, interval)
	}
}

func devNull(t *testing.T) *os.File {
	t.Helper()
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
