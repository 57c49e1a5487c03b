package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// seenAt is the mark of the attached (or just left) session as of now: its last activity
// or now, whichever is later (a server's clock may run ahead of ours).
func (m *Model) seenAt() (string, time.Time, bool) {
	if m.cfg.MarkSeen == nil || m.board != nil || m.task.ID == "" {
		return "", time.Time{}, false
	}
	at := m.now
	if m.task.Updated.After(at) {
		at = m.task.Updated
	}
	return m.task.ID, at, true
}

// seenCmd records, in a command (a file write), that the attached session
// is seen as of now (Config.MarkSeen).
func (m *Model) seenCmd() tea.Cmd {
	id, at, ok := m.seenAt()
	if !ok {
		return nil
	}
	mark := m.cfg.MarkSeen
	return func() tea.Msg {
		_ = mark(id, at) // a mark not saved is only an unread mark too many
		return nil
	}
}

// markSeenAtExit records the session on screen when the UI ends.
func (m *Model) markSeenAtExit() {
	if id, at, ok := m.seenAt(); ok && m.mode == modeTask {
		_ = m.cfg.MarkSeen(id, at)
	}
}
