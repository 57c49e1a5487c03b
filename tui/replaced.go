package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// isReplacedNotice says whether ev is the notice that the attached id
// names another session now (client.FollowSame started the stream over on
// it, after a Reset).
func isReplacedNotice(ev *events.Event) bool {
	return ev.Kind == events.KindNotice && ev.NoticeKind == client.NoticeReplaced
}

// sessionReplaced follows a session replaced under the attached id: the
// timeline was started over on the new one (the stream's Reset); the task
// (its creation time, status, model) is read again, and so are the held
// messages, which are orphans now if they were written for the old one.
func (m *Model) sessionReplaced() tea.Cmd {
	id := m.task.ID
	m.setFlash("session "+shortID(id)+" was replaced by a new one under the same id — showing the new one", true)
	return tea.Batch(m.loadTaskCmd(m.gen, id), m.loadHeldCmd(id), m.loadStraysCmd())
}
