package tui

import (
	"os"
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

// renderKickEvery and renderKickFor shape the wake-up of a lone view. A
// view that comes a frame or more after the previous wake-up (a keypress
// after a pause, the first batch of a replay) would otherwise wait for the
// next tick, on average half a frame and after a stop a whole one: the gate
// makes the ticker tick every renderKickEvery instead, until the renderer
// writes the frame (wrote) or renderKickFor has passed, and then puts the
// frame interval back. renderKickEvery is far below a millisecond because
// Go's runtime rounds a sleep shorter than that up to a whole millisecond
// when it has nothing else to do: the first tick then comes at the
// scheduler's next look at its timers, microseconds after the view. A tick
// that comes before Bubble Tea has the view finds the old frame, and the
// next one draws it.
const (
	renderKickEvery = 20 * time.Microsecond
	renderKickFor   = 2 * time.Millisecond
	// renderKickAfterWrite is how long a kick lasts after the renderer's
	// first write (see wrote).
	renderKickAfterWrite = 2 * time.Millisecond
	// renderKickLate is the tick of a kick after the write (see wrote) and
	// of one whose frame is late (see endKick).
	renderKickLate = time.Millisecond
)

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
//   - a view that comes a frame interval or more after the previous
//     wake-up kicks the ticker (see renderKickEvery): it is drawn at once,
//     not at the next tick; views closer together than that are drawn by
//     the regular ticks, so the frame rate stays capped;
//   - renderIdleAfter without a new view stops the ticker again.
//
// The ticker is an unexported field of tea.Program, reached with reflect
// and unsafe. If an upgrade renames or retypes it, the gate finds nothing
// and does nothing (the renderer ticks as it always did), and
// TestRenderGateFindsTheTicker fails so that this does not go unnoticed.
type renderGate struct {
	find     func() (*time.Ticker, bool) // see programTicker
	interval time.Duration
	idle     time.Duration
	// kickEvery and kickFor: see renderKickEvery; zero kickEvery turns
	// kicking off (the ticker only restarts at the frame interval).
	kickEvery, kickFor time.Duration

	mu      sync.Mutex
	ticker  *time.Ticker
	missing bool // this Bubble Tea has no such ticker: do nothing
	running bool // the ticker ticks (it does when Bubble Tea starts it)
	last    time.Time
	stopper *time.Timer
	armed   bool // stopper is scheduled
	closed  bool

	hurried bool      // the next view kicks whenever the last kick was
	kicked  time.Time // the last kick
	kickSeq uint64    // which kick the restorer restores after
	kicking bool      // the ticker ticks every kickEvery
	// wroteInKick: the renderer wrote during this kick (wrote).
	wroteInKick bool
	restore     *time.Timer // puts the frame interval back after a kick
}

func newRenderGate(p *tea.Program) *renderGate {
	return &renderGate{
		find:      func() (*time.Ticker, bool) { return programTicker(p) },
		interval:  time.Second / renderFPS,
		idle:      renderIdleAfter,
		kickEvery: renderKickEvery,
		kickFor:   renderKickFor,
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

// viewed is called at the end of every View, i.e. on the program's
// goroutine after every Update and just before Bubble Tea hands the view
// to its renderer (Program.Run creates the ticker on that goroutine before
// the first View). changed: the view differs from the previous one (one
// that does not makes the renderer write nothing, so it kicks nothing).
func (g *renderGate) viewed(changed bool) {
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
	if !changed && !g.hurried {
		return
	}
	now := time.Now()
	g.last = now
	hurried := g.hurried
	g.hurried = false
	switch {
	case g.kickEvery > 0 && (hurried || now.Sub(g.kicked) >= g.interval):
		g.kick(now)
	case !g.running:
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

// hurry makes the next view kick the ticker even within a frame interval
// of the last kick: for the few frames of the start that must not wait for
// a tick (see Model.firstPaint). It is called from View, before viewed.
func (g *renderGate) hurry() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hurried = true
}

// kick makes the ticker tick every kickEvery for kickFor (g.mu held). The
// view is handed to the renderer microseconds after viewed returns, so the
// first or second of those ticks flushes it.
func (g *renderGate) kick(now time.Time) {
	g.kicked = now
	g.kickSeq++
	g.kicking, g.running, g.wroteInKick = true, true, false
	g.ticker.Reset(g.kickEvery)
	seq := g.kickSeq
	if g.restore != nil {
		g.restore.Stop()
	}
	g.restore = time.AfterFunc(g.kickFor, func() { g.endKick(seq) })
}

// wrote is called when the renderer wrote to the terminal: a kick has
// most likely done its work. The burst of quick ticks ends; but the write
// may have been something else than the kicked frame (a command's output,
// the previous frame), so one tick a millisecond on looks again before the
// kick ends (endKick, within renderKickAfterWrite) and the frame interval
// comes back. Ending the kick at the write itself left such a frame to the
// next regular tick: 16 ms more at the 99th percentile of PageUp.
func (g *renderGate) wrote() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || !g.kicking || g.wroteInKick {
		return
	}
	g.wroteInKick = true
	g.ticker.Reset(renderKickLate)
	if g.restore != nil {
		g.restore.Reset(renderKickAfterWrite)
	}
}

// endKick puts the frame interval back after kick seq, unless a later kick
// or a stop came first. A kick whose frame has not been written by then
// goes on at one tick every renderKickLate until the write (wrote) or until
// a frame interval has passed since the kick: the renderer goroutine was
// starved (on two cores, the machine busy elsewhere), not done, and going
// back to the frame interval at once dropped its undelivered tick, which
// left the frame to the next regular tick: traced in tmux, a PageUp's frame
// written 21 ms after its view.
func (g *renderGate) endKick(seq uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || seq != g.kickSeq || !g.kicking {
		return
	}
	if !g.wroteInKick {
		if left := g.interval - time.Since(g.kicked); left > renderKickLate {
			g.ticker.Reset(renderKickLate)
			g.restore.Reset(left)
			return
		}
	}
	g.kicking = false
	if g.running {
		g.ticker.Reset(g.interval)
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
	g.running, g.kicking = false, false
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
	if g.restore != nil {
		g.restore.Stop()
	}
}

// gateOutput is the terminal Bubble Tea writes frames to, telling the gate
// of each write (renderGate.wrote). It is the *os.File itself for
// everything else (Bubble Tea reads its descriptor for the terminal's size
// and modes).
type gateOutput struct {
	*os.File
	gate *renderGate // set before the program runs
}

func (o *gateOutput) Write(p []byte) (int, error) {
	n, err := o.File.Write(p)
	if o.gate != nil {
		o.gate.wrote()
	}
	return n, err
}
