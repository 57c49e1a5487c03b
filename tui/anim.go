package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// tickInterval paces the spinner (10 fps is calm and costs nothing).
const tickInterval = 100 * time.Millisecond

// flashTTL is how long a status message stays.
const flashTTL = 4 * time.Second

type spinState struct {
	frame   int
	ticking bool
	seq     int
}

type tickMsg struct{ seq int }

type flashExpiredMsg struct{ seq int }

// flash is a short status message shown in the hints row.
type flash struct {
	text  string
	err   bool
	seq   int
	armed bool // its expiry timer is running
}

// setFlash shows a one-line message. Texts often carry daemon error
// messages, so they are sanitized (and newlines folded) here, once.
func (m *Model) setFlash(text string, isErr bool) {
	m.flash = flash{text: oneLine(text), err: isErr, seq: m.flash.seq + 1}
}

// needsTick: only while something visible animates. An idle session costs
// no wake-ups at all.
func (m *Model) needsTick() bool {
	switch m.mode {
	case modeList:
		if m.overlay == ovNewTask {
			return false
		}
		if m.daemonConn.Phase == sse.PhaseReconnecting {
			return true
		}
		return !m.daemonGone() && m.list.anyVisibleGenerating()
	default:
		// A delivery animates until it answers, whatever the stream does.
		if m.held.inflight > 0 || len(m.held.local) > 0 {
			return true
		}
		if m.conn.Phase == sse.PhaseReconnecting {
			return true // the countdown
		}
		if m.streamGone() {
			// Nothing the stream showed can change any more: the last
			// known "generating" and running tools are frozen, not live.
			return false
		}
		if m.busy() {
			return true
		}
		for _, i := range m.owners {
			if i >= 0 && i < m.tl.Len() {
				if it := m.tl.At(i); it.Kind == events.ItemTool && it.Tool != nil && it.Tool.Status == events.ToolRunning {
					return true
				}
			}
		}
	}
	return false
}

// streamGone is whether the task stream ended for good (the daemon refused
// it: 404 task gone, 204, another 4xx, or it returned an error). No event
// will come to end a run or a tool it showed as in progress.
func (m *Model) streamGone() bool {
	return m.mode == modeTask && m.conn.Phase == sse.PhaseFailed
}

// daemonGone is the same for the watch behind the task list.
func (m *Model) daemonGone() bool { return m.daemonConn.Phase == sse.PhaseFailed }

// liveSpinner is the spinner frame for something shown in progress, or ""
// (a static icon) once the stream that would end it is gone.
func (m *Model) liveSpinner(gone bool) string {
	if gone {
		return ""
	}
	return spinnerFrame(m.spin.frame)
}

// armTick starts the animation timer when needed (and the flash expiry).
func (m *Model) armTick() tea.Cmd {
	var cmds []tea.Cmd
	if m.flash.text != "" && !m.flash.armed {
		m.flash.armed = true
		seq := m.flash.seq
		cmds = append(cmds, m.after(flashTTL, flashExpiredMsg{seq: seq}))
	}
	if !m.spin.ticking && m.needsTick() {
		m.spin.ticking = true
		m.spin.seq++
		seq := m.spin.seq
		cmds = append(cmds, m.after(tickInterval, tickMsg{seq: seq}))
	}
	return tea.Batch(cmds...)
}

func (m *Model) handleTick(msg tickMsg) {
	if msg.seq != m.spin.seq {
		return
	}
	m.spin.ticking = false
	m.spin.frame++
}

// after delivers msg once d has passed. Tests replace it to drive time by
// hand.
func realAfter(d time.Duration, msg tea.Msg) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return msg })
}
