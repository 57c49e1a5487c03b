package firstpaint

import (
	"io"
	"os"
	"sync"
)

// Guard is perch-ui's side of a hand-over: until the UI takes the screen
// (Disarm), anything perch-ui writes to the terminal first leaves the
// alternate screen perch drew on, so that an error before the UI (the
// server went away meanwhile) is read on the normal screen, and Close
// leaves it when the UI never started.
type Guard struct {
	mu    sync.Mutex
	out   io.Writer // the terminal
	armed bool
}

// TakeOver is called by perch-ui first thing: when getenv(Env) holds a
// hand-over, it turns tty's flags back on and returns the hand-over and a
// guard writing to out; else ok is false and the guard does nothing.
func TakeOver(getenv func(string) string, tty *os.File, out io.Writer) (h Handover, g *Guard, ok bool) {
	h, ok = Decode(getenv(Env))
	g = &Guard{out: out, armed: ok}
	if ok {
		_ = Restore(tty, h.Modes) // a terminal that refuses keeps perch's modes; Bubble Tea sets its own
	}
	return h, g, ok
}

// Writer is w guarded: its first write leaves the painted screen.
func (g *Guard) Writer(w io.Writer) io.Writer { return guarded{g: g, w: w} }

// Disarm: the UI has the screen now (it leaves the alternate screen
// itself).
func (g *Guard) Disarm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = false
}

// Close leaves the painted screen if the UI never took it.
func (g *Guard) Close() { g.unpaint() }

func (g *Guard) unpaint() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.armed {
		g.armed = false
		_, _ = io.WriteString(g.out, leave)
	}
}

type guarded struct {
	g *Guard
	w io.Writer
}

func (w guarded) Write(p []byte) (int, error) {
	w.g.unpaint()
	return w.w.Write(p)
}

// Undo is perch's way back when it painted and cannot hand over after
// all: the flags back on, the normal screen back.
func Undo(tty *os.File, out io.Writer, m Modes) {
	_ = Restore(tty, m)
	_, _ = io.WriteString(out, leave)
}
