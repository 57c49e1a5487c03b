package tui

import (
	"reflect"
	"sync"
	"time"
	"unsafe"

	tea "charm.land/bubbletea/v2"
)

// renderFPS is the renderer's frame rate while something changes. perch
// sets it explicitly so the gate below restarts the ticker at the same
// rate.
const renderFPS = 60

// renderIdleAfter is how long the renderer keeps ticking after the last
// new view. Only the tick after the last view matters (it draws that
// frame); the rest is margin for a starved renderer goroutine, because
// stopping the ticker drops a tick that fired but was not received yet.
const renderIdleAfter = 500 * time.Millisecond

// renderGate stops Bubble Tea's frame ticker while nothing is drawn.
//
// Bubble Tea v2 (v2.0.9 to v2.1.1) flushes frames from a time.Ticker that
// runs at the full frame rate for the program's whole life: idle, the
// process still wakes 60 times a second to find the frame unchanged. That
// was nearly all of an idle perch's CPU (about 0.9 % of a core). Upstream
// pull requests make the ticker demand-driven (charmbracelet/bubbletea
// #1776, #1796); until one is released the gate does it from outside.
// Bubble Tea calls View after every Update, and nothing reaches the
// terminal but through the next flush after it, so:
//
//   - each view restarts the ticker when it is stopped (the frame is drawn
//     on the next tick, at most one frame interval later, as before);
//   - renderIdleAfter without a new view stops it again.
//
// The ticker is an unexported field of tea.Program, reached with reflect
// and unsafe. If an upgrade renames or retypes it, the gate finds nothing
// and does nothing (the renderer ticks as it always did), and
// TestRenderGateFindsTheTicker fails so that this does not go unnoticed.
type renderGate struct {
	find     func() (*time.Ticker, bool) // see programTicker
	interval time.Duration
	idle     time.Duration

	mu      sync.Mutex
	ticker  *time.Ticker
	missing bool // this Bubble Tea has no such ticker: do nothing
	running bool // the ticker ticks (it does when Bubble Tea starts it)
	last    time.Time
	stopper *time.Timer
	armed   bool // stopper is scheduled
	closed  bool
}

func newRenderGate(p *tea.Program) *renderGate {
	return &renderGate{
		find:     func() (*time.Ticker, bool) { return programTicker(p) },
		interval: time.Second / renderFPS,
		idle:     renderIdleAfter,
	}
}

// programTicker reads tea.Program's renderer ticker (nil until Run
// creates it); ok is false when this Bubble Tea has no such field.
func programTicker(p *tea.Program) (t *time.Ticker, ok bool) {
	v := reflect.ValueOf(p).Elem().FieldByName("ticker")
	if !v.IsValid() || v.Type() != reflect.TypeFor[*time.Ticker]() {
		return nil, false
	}
	return *(**time.Ticker)(unsafe.Pointer(v.UnsafeAddr())), true
}

// viewed is called on every View, i.e. on the program's goroutine after
// every Update (Program.Run creates the ticker on that goroutine before
// the first View).
func (g *renderGate) viewed() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || g.missing {
		return
	}
	if g.ticker == nil {
		t, ok := g.find()
		g.missing = !ok
		if t == nil {
			return
		}
		g.ticker, g.running = t, true // Bubble Tea starts it ticking
	}
	g.last = time.Now()
	if !g.running {
		g.ticker.Reset(g.interval)
		g.running = true
	}
	if !g.armed {
		g.armed = true
		if g.stopper == nil {
			g.stopper = time.AfterFunc(g.idle, g.check)
		} else {
			g.stopper.Reset(g.idle)
		}
	}
}

// check stops the ticker when no view came for g.idle, or looks again
// when that time is up.
func (g *renderGate) check() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = false
	if g.closed || !g.running {
		return
	}
	if quiet := time.Since(g.last); quiet < g.idle {
		g.armed = true
		g.stopper.Reset(g.idle - quiet)
		return
	}
	g.ticker.Stop()
	g.running = false
}

// ticking reports whether the gate lets the renderer tick (for tests).
func (g *renderGate) ticking() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running
}

// close ends the gate after the program returned; the ticker is Bubble
// Tea's again (it stops it on shutdown).
func (g *renderGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	if g.stopper != nil {
		g.stopper.Stop()
	}
}
