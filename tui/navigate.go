package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/events"
)

// transcriptKey handles keys while the transcript has focus.
func (m *Model) transcriptKey(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	h := m.transcriptHeight()
	src := m.source()
	switch {
	case key.Matches(msg, k.Help):
		m.overlay = ovHelp
	case key.Matches(msg, k.Quit):
		m.quitting = true
	case key.Matches(msg, k.Back):
		if m.search.active() != "" {
			m.search.clear()
			return nil
		}
		return m.detach()
	case key.Matches(msg, k.Compose):
		return m.focusComposer()
	case key.Matches(msg, k.Down):
		m.tr.scroll(src, 1, h)
	case key.Matches(msg, k.Up):
		m.tr.scroll(src, -1, h)
	case key.Matches(msg, k.PageDown):
		m.tr.scroll(src, max(h-1, 1), h)
	case key.Matches(msg, k.PageUp):
		m.tr.scroll(src, -max(h-1, 1), h)
	case key.Matches(msg, k.HalfDown):
		m.tr.scroll(src, max(h/2, 1), h)
	case key.Matches(msg, k.HalfUp):
		m.tr.scroll(src, -max(h/2, 1), h)
	case key.Matches(msg, k.Top):
		m.tr.toTop(src, h)
	case key.Matches(msg, k.Bottom):
		m.tr.toBottom(src, h)
	case key.Matches(msg, k.PrevItem):
		m.moveSelection(-1)
	case key.Matches(msg, k.NextItem):
		m.moveSelection(+1)
	case key.Matches(msg, k.PrevUser):
		m.jump(-1, isUserTurn, "no earlier user message")
	case key.Matches(msg, k.NextUser):
		m.jump(+1, isUserTurn, "no later user message")
	case key.Matches(msg, k.NextErr):
		m.jump(+1, isError, "no later error")
	case key.Matches(msg, k.PrevErr):
		m.jump(-1, isError, "no earlier error")
	case key.Matches(msg, k.Expand):
		m.toggleExpand()
	case key.Matches(msg, k.Search):
		m.overlay = ovSearch
		m.search.input = ""
	case key.Matches(msg, k.NextMatch):
		m.findNext(+1)
	case key.Matches(msg, k.PrevMatch):
		m.findNext(-1)
	case key.Matches(msg, k.Copy):
		return m.copySelected()
	case key.Matches(msg, k.CopyCode):
		return m.copyCode()
	case key.Matches(msg, k.CopyLines):
		m.askCopyLines()
	case key.Matches(msg, k.Thinking):
		m.toggleThinking()
	case key.Matches(msg, k.Todos):
		m.toggleTodos()
	case key.Matches(msg, k.Queue):
		m.queueOpen = !m.queueOpen
	case key.Matches(msg, k.CancelRun):
		m.askCancel()
	case key.Matches(msg, k.Retry):
		return m.retryHeld()
	case key.Matches(msg, k.Held):
		return m.focusHeldPanel()
	case key.Matches(msg, k.Editor):
		return tea.Batch(m.focusComposer(), m.openEditor())
	case typed(msg):
		return m.typeIntoComposer(msg)
	}
	return m.prepareSelected()
}

// typed reports whether a key press types text (a printable character with
// no modifier but shift): the keys that are never lost when the transcript
// or the held list has focus and does not bind them.
func typed(msg tea.KeyPressMsg) bool {
	return msg.Text != "" && msg.Mod&^(tea.ModShift|tea.ModCapsLock|tea.ModNumLock) == 0
}

// typeIntoComposer focuses the composer and types msg into it: a key no
// other view binds starts a message, and the keys after it follow it
// there (typing "What now" over the transcript leaves "What now", not the
// "t now" left after the transcript's keys ate the rest). Without a
// composer (read-only backends) the key does nothing.
func (m *Model) typeIntoComposer(msg tea.KeyPressMsg) tea.Cmd {
	if m.mode != modeTask || !m.caps.Send {
		return nil
	}
	focus := m.focusComposer()
	return tea.Batch(focus, m.composerKey(msg))
}

// prepareSelected builds, off the UI goroutine, what expanding the
// selected tool will need when its output is big (its line tables), so
// that Enter finds them ready. Nothing runs for small or expanded items,
// or when the work is done.
func (m *Model) prepareSelected() tea.Cmd {
	if m.tr.sel < 0 || m.tr.sel >= m.tl.Len() {
		return nil
	}
	it := m.tl.At(m.tr.sel)
	if it.Kind != events.ItemTool || m.expanded[it] {
		return nil
	}
	work := m.rend.Prepare(it, m.source().opts(m.tr.sel))
	if work == nil {
		return nil
	}
	return func() tea.Msg { work(); return nil }
}

// handleWheel scrolls the help, or the transcript (or the task list)
// wherever focus is.
func (m *Model) handleWheel(msg tea.MouseWheelMsg) {
	d := 0
	switch msg.Button {
	case tea.MouseWheelUp:
		d = -3
	case tea.MouseWheelDown:
		d = 3
	default:
		return
	}
	if m.overlay == ovHelp {
		m.scrollHelp(d)
		return
	}
	if m.overlay == ovFind {
		m.moveFind(d / 3)
		return
	}
	if m.mode == modeList {
		m.list.move(d / 3)
		return
	}
	m.tr.scroll(m.source(), d, m.transcriptHeight())
}

// handleClick selects the transcript item under the pointer; clicking the
// selected item again toggles it. A click in the composer area focuses it.
func (m *Model) handleClick(msg tea.MouseClickMsg) {
	if m.mode != modeTask || msg.Button != tea.MouseLeft || m.overlay != ovNone {
		return
	}
	y := msg.Y - m.trY
	if y < 0 || y >= m.trH {
		if msg.Y > m.trY+m.trH {
			m.focusComposer()
		}
		return
	}
	if y >= len(m.owners) || m.owners[y] < 0 {
		return
	}
	i := m.owners[y]
	m.focus = focusTranscript
	m.comp.blur()
	if m.tr.sel == i {
		m.toggleExpand()
		return
	}
	m.tr.sel = i
}

// moveSelection moves the selected item by delta; the first move selects
// the top-most visible item (]) or the bottom-most ([).
func (m *Model) moveSelection(delta int) {
	src := m.source()
	n := src.count()
	if n == 0 {
		return
	}
	if m.tr.sel < 0 {
		// Nothing selected: ] takes the first item on screen, [ the last.
		m.tr.sel = lastVisible(m.owners)
		if delta > 0 {
			m.tr.sel = firstVisible(m.owners)
		}
		if m.tr.sel < 0 || m.tr.sel >= n {
			m.tr.sel = n - 1
		}
	} else {
		m.tr.sel = min(max(m.tr.sel+delta, 0), n-1)
	}
	m.tr.reveal(src, m.tr.sel, m.transcriptHeight())
}

// jump selects the next (dir>0) or previous item matching pred. It scans
// items, not renders, so a long jump costs no layout.
func (m *Model) jump(dir int, pred func(*events.Item) bool, none string) {
	n := m.tl.Len()
	start := m.tr.sel
	if start < 0 {
		start = lastVisible(m.owners)
		if start < 0 {
			start = n
		}
		if dir > 0 {
			start--
		}
	}
	for i := start + dir; i >= 0 && i < n; i += dir {
		if pred(m.tl.At(i)) {
			m.selectItem(i)
			return
		}
	}
	m.setFlash(none, false)
}

func (m *Model) selectItem(i int) {
	m.tr.sel = i
	m.tr.reveal(m.source(), i, m.transcriptHeight())
}

func isUserTurn(it *events.Item) bool { return it.Kind == events.ItemUser }

func isError(it *events.Item) bool {
	switch it.Kind {
	case events.ItemTool:
		// A command that exited non-zero is an error here as everywhere
		// (events.ToolOutcome).
		return it.Tool != nil && it.Tool.Outcome().Failed()
	case events.ItemNotice:
		return it.Level == events.LevelError
	}
	return false
}

// toggleExpand expands or collapses the selected item (selecting the
// bottom-most visible one first if nothing is selected).
func (m *Model) toggleExpand() {
	if m.tr.sel < 0 {
		m.moveSelection(0)
	}
	if m.tr.sel < 0 || m.tr.sel >= m.tl.Len() {
		return
	}
	it := m.tl.At(m.tr.sel)
	if m.expanded[it] {
		delete(m.expanded, it)
	} else {
		m.expanded[it] = true
	}
	src := m.source()
	h := m.transcriptHeight()
	m.tr.clamp(src, h)
	m.tr.reveal(src, m.tr.sel, h)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (m *Model) toggleTodos() {
	if len(m.tl.Todos()) == 0 && !m.todosOpen {
		m.setFlash("no todos yet", false)
		return
	}
	m.todosOpen = !m.todosOpen
}

// toggleThinking shows or hides the reasoning of every turn.
func (m *Model) toggleThinking() {
	m.hideThinking = !m.hideThinking
	if m.hideThinking {
		m.setFlash("reasoning hidden — "+m.keys.Thinking.Help().Key+" shows it", false)
	} else {
		m.setFlash("reasoning shown — enter on a turn expands it", false)
	}
	src := m.source()
	h := m.transcriptHeight()
	m.tr.clamp(src, h)
	if m.tr.sel >= 0 && m.tr.sel < src.count() {
		m.tr.reveal(src, m.tr.sel, h)
	}
}
