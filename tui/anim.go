package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
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
		if m.daemonConn.Phase == client.PhaseReconnecting {
			return true
		}
		return m.list.anyVisibleGenerating()
	default:
		if m.busy() || m.conn.Phase == client.PhaseReconnecting {
			return true
		}
		for _, o := range m.taskOutbox() {
			if o.state == sendPending {
				return true
			}
		}
		items := m.tl.Items()
		for _, i := range m.owners {
			if i >= 0 && i < len(items) {
				if it := items[i]; it.Kind == events.ItemTool && it.Tool != nil && it.Tool.Status == events.ToolRunning {
					return true
				}
			}
		}
	}
	return false
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
