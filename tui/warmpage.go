package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// Neighbour pages: after the transcript moves (a key, a resize, new
// events), the items of one page above the viewport and one page below it
// are laid out in the messages that follow, while the user reads, so that
// the next PageUp or PageDown finds them in the renderer's cache instead
// of rendering their markdown while the key waits. The work is cut into
// slices of warmBudget, each its own message, so a key that comes
// meanwhile waits for one slice at most; it stops at a page each way.
// It starts warmAfterMove after the move, once the move's own frame is on
// the screen. While the view follows a stream that is still delivering, it
// waits for warmQuiet without events instead: laying out between a
// replay's batches delayed the final reply of a 20,000-frame Suna run by
// 25 ms.

// warmBudget is the most one slice of neighbour layout takes before it
// hands the event loop back.
const warmBudget = 3 * time.Millisecond

// warmAfterMove is how long neighbour layout waits after the view moved.
// Bubble Tea draws a key's frame on a goroutine of its own just after the
// key's Update; a slice of layout started at once ran beside that flush,
// and on two cores (perch's renderer, the terminal and whatever polls it
// all want one) it starved the renderer past its wake-up, so the frame
// waited for the next regular tick (one traced frame came 21 ms after its
// view). PageUp's 99th percentile in tmux, side by side, four runs:
// 6.7-22.8 ms without the wait, 4.9-8.7 ms with it. A frame is written
// 1-2 ms after its key; keys held down repeat every 30 ms or more, which
// leaves the rest for the layout.
const warmAfterMove = 8 * time.Millisecond

// warmQuiet is how long a followed stream must have been quiet before
// neighbour layout starts.
const warmQuiet = 150 * time.Millisecond

// warmMsg asks for a slice of neighbour layout for the view warm.at.
type warmMsg struct{ at warmKey }

// warmKey is what the neighbour pages depend on: a view at another place,
// width or height, or with other items, has other neighbours.
type warmKey struct {
	top, topLine, count, width, height int
	follow                             bool
}

// warmState is where neighbour layout stands.
type warmState struct {
	done     warmKey   // the view whose neighbours are laid out
	pending  bool      // a warmMsg is on its way
	streamAt time.Time // the task stream's last events
}

// streaming reports whether the view follows a stream that delivered
// events within warmQuiet.
func (m *Model) streaming() bool {
	return m.tr.follow && m.now.Sub(m.warm.streamAt) < warmQuiet
}

// warmAfter asks for a warmMsg for k after d (m.after: a timer, or nothing
// in tests that drive time by hand): warmQuiet for a view that follows a
// delivering stream, warmAfterMove after a move.
func (m *Model) warmAfter(d time.Duration, k warmKey) tea.Cmd {
	cmd := m.after(d, warmMsg{at: k})
	m.warm.pending = cmd != nil
	return cmd
}

func (m *Model) warmKeyNow() warmKey {
	return warmKey{top: m.tr.top, topLine: m.tr.topLine, count: m.tl.Len(), width: m.w,
		height: m.transcriptHeight(), follow: m.tr.follow}
}

// warmCmd starts neighbour layout when the view moved since it was last
// done and none is on its way.
func (m *Model) warmCmd() tea.Cmd {
	if m.mode != modeTask || m.warm.pending || m.w <= 0 || m.h <= 0 {
		return nil
	}
	k := m.warmKeyNow()
	if k == m.warm.done {
		return nil
	}
	if m.streaming() {
		return m.warmAfter(warmQuiet, k)
	}
	return m.warmAfter(warmAfterMove, k)
}

// handleWarm lays out neighbour items until the budget is spent; what is
// left goes on in the next message (the view has not moved) or starts
// over for the new view (warmCmd, at the end of Update).
func (m *Model) handleWarm(msg warmMsg) tea.Cmd {
	m.warm.pending = false
	if m.mode != modeTask || msg.at != m.warmKeyNow() {
		return nil // the view moved: warmCmd starts over for it
	}
	if m.streaming() {
		return m.warmAfter(warmQuiet, msg.at)
	}
	if m.warmNeighbours(time.Now().Add(warmBudget)) {
		m.warm.done = msg.at
		return nil
	}
	m.warm.pending = true
	return func() tea.Msg { return msg }
}

// warmNeighbours lays out the items of a page above the viewport and a
// page below it (their heights: the renderer lays out an item to know
// it, and caches it), until deadline; true when both pages are done.
func (m *Model) warmNeighbours(deadline time.Time) bool {
	src := m.source()
	n, h := src.count(), m.transcriptHeight()
	if n == 0 || h <= 0 {
		return true
	}
	// Above: the items a PageUp brings in.
	acc := m.tr.topLine
	for j := m.tr.top - 1; j >= 0 && acc < h; j-- {
		if time.Now().After(deadline) {
			return false
		}
		acc += blockHeight(src, j)
	}
	// The viewport, then below it: the items a PageDown brings in.
	acc = -m.tr.topLine
	for j := m.tr.top; j < n && acc < 2*h; j++ {
		if time.Now().After(deadline) {
			return false
		}
		acc += blockHeight(src, j)
	}
	return true
}
