package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// keyMap is every binding, with the help text the hints bar and the `?`
// screen show. It is a value built per model, not a package global.
type keyMap struct {
	// everywhere (outside text inputs)
	Help, Quit key.Binding

	// task list
	ListUp, ListDown, ListTop, ListBottom, ListPgUp, ListPgDown key.Binding
	Attach, NewTask, Filter, Refresh, FindAll                   key.Binding
	// board (several sources)
	BoardStatus, BoardSource key.Binding

	// transcript
	Down, Up, PageDown, PageUp, HalfDown, HalfUp, Top, Bottom key.Binding
	PrevItem, NextItem, PrevUser, NextUser, NextErr, PrevErr  key.Binding
	Expand, Search, NextMatch, PrevMatch, Copy                key.Binding
	CopyCode, CopyLines, Thinking                             key.Binding
	Todos, Queue, Compose, Back                               key.Binding

	// composer
	Send, Hold, Newline, History, WebSearch, Leave, CancelRun, Retry key.Binding
	QueueToggle, TodosToggle, ScrollPage, ToHeld, Editor             key.Binding

	// held panel
	HeldUp, HeldDown, HeldMoveUp, HeldMoveDown, HeldEdit, HeldDelete, HeldAdopt key.Binding
	HeldToComposer, HeldRelease, HeldPause, HeldBack, Held                      key.Binding

	// confirmation
	Yes, No key.Binding
}

// limitTo disables the keys of actions the backend cannot do: a disabled
// binding never matches and is left out of the help.
func (k *keyMap) limitTo(c uiCaps) {
	if !c.Send {
		for _, b := range []*key.Binding{&k.Send, &k.Hold, &k.Editor, &k.Newline, &k.History, &k.WebSearch, &k.Compose, &k.Retry, &k.QueueToggle,
			&k.TodosToggle, &k.ScrollPage, &k.Leave, &k.ToHeld, &k.Held, &k.HeldUp, &k.HeldDown, &k.HeldMoveUp, &k.HeldMoveDown,
			&k.HeldEdit, &k.HeldDelete, &k.HeldAdopt, &k.HeldToComposer, &k.HeldRelease, &k.HeldPause, &k.HeldBack} {
			b.SetEnabled(false)
		}
	}
	if !c.Cancel {
		k.CancelRun.SetEnabled(false)
	}
	if !c.Create {
		k.NewTask.SetEnabled(false)
	}
	if !c.WebSearch {
		k.WebSearch.SetEnabled(false)
	}
}

func newKeyMap() keyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return keyMap{
		Help: b("?", "all keys", "?", "f1"),
		Quit: b("q", "quit", "q"),

		ListUp:     b("↑/k", "up", "up", "k"),
		ListDown:   b("↓/j", "down", "down", "j"),
		ListTop:    b("g", "first", "g", "home"),
		ListBottom: b("G", "last", "G", "end"),
		ListPgUp:   b("pgup", "page up", "pgup"),
		ListPgDown: b("pgdn", "page down", "pgdown"),
		Attach:     b("enter", "open", "enter"),
		NewTask:    b("n", "new task", "n"),
		Filter:     b("/", "filter", "/"),
		Refresh:    b("r", "refresh", "r"),
		// ctrl+f, find: every letter of the list and board is taken or
		// types a filter, and it is the key for search most people know.
		FindAll: b("ctrl+f", "search all sessions", "ctrl+f"),

		BoardStatus: b("s", "filter by status", "s"),
		BoardSource: b("S", "filter by source", "S"),

		Down:      b("j/↓", "line down", "j", "down"),
		Up:        b("k/↑", "line up", "k", "up"),
		PageDown:  b("pgdn/f", "page down", "pgdown", "f"),
		PageUp:    b("pgup/b", "page up", "pgup", "b"),
		HalfDown:  b("ctrl+d", "half page down", "ctrl+d", "d"),
		HalfUp:    b("ctrl+u", "half page up", "ctrl+u", "u"),
		Top:       b("g", "top", "g", "home"),
		Bottom:    b("G", "bottom, follow", "G", "end"),
		PrevItem:  b("[", "previous item", "[", "shift+tab"),
		NextItem:  b("]", "next item", "]"),
		PrevUser:  b("{", "previous user turn", "{"),
		NextUser:  b("}", "next user turn", "}"),
		NextErr:   b("e", "next error", "e"),
		PrevErr:   b("E", "previous error", "E"),
		Expand:    b("enter/space", "expand/collapse", "enter", "space"),
		Search:    b("/", "search", "/"),
		NextMatch: b("n", "next match", "n"),
		PrevMatch: b("N", "previous match", "N"),
		Copy:      b("y", "copy item", "y"),
		CopyCode:  b("c", "copy a code block", "c"),
		CopyLines: b("Y", "copy lines…", "Y"),
		Thinking:  b("R", "reasoning shown/hidden", "R"),
		Todos:     b("t", "todos", "t", "ctrl+t"),
		Queue:     b("Q", "queue details", "Q", "ctrl+q"),
		Compose:   b("tab/i", "write", "tab", "i", "a"),
		Held:      b("H", "held messages", "H"),
		Back:      b("esc", "tasks", "esc"),

		Send:        b("enter", "send (queued if busy)", "enter"),
		Hold:        b("ctrl+g", "hold (sent when idle)", "ctrl+g"),
		ToHeld:      b("shift+tab", "held messages", "shift+tab"),
		Newline:     b("shift+enter", "newline", "shift+enter", "ctrl+j", "alt+enter"),
		History:     b("↑/↓", "history", "up", "down"),
		WebSearch:   b("ctrl+s", "web search", "ctrl+s"),
		Leave:       b("tab/esc", "transcript", "tab", "esc"),
		CancelRun:   b("ctrl+x", "cancel run", "ctrl+x"),
		Retry:       b("ctrl+r", "retry sending now", "ctrl+r"),
		QueueToggle: b("ctrl+q", "queue details", "ctrl+q"),
		TodosToggle: b("ctrl+t", "todos", "ctrl+t"),
		ScrollPage:  b("pgup/pgdn", "scroll", "pgup", "pgdown"),
		// ctrl+o as nushell's and kross's: ctrl+e (crush's first choice)
		// is the textarea's end of line, ctrl+g holds, ctrl+x cancels.
		Editor: b("ctrl+o", "write in $EDITOR", "ctrl+o"),

		HeldUp:         b("↑↓/jk", "select", "up", "k"),
		HeldDown:       b("↓/j", "select", "down", "j"),
		HeldMoveUp:     b("K/shift+↑", "move up", "K", "shift+up"),
		HeldMoveDown:   b("J/shift+↓", "move down", "J", "shift+down"),
		HeldEdit:       b("e/enter", "edit in the composer", "e", "enter"),
		HeldDelete:     b("d/del", "delete", "d", "delete"),
		HeldToComposer: b("c", "move to the composer", "c"),
		HeldAdopt:      b("m", "orphan: move here", "m"),
		HeldRelease:    b("s", "send now", "s"),
		HeldPause:      b("p", "pause/resume delivery", "p"),
		HeldBack:       b("esc/tab", "composer", "esc", "tab", "shift+tab"),

		Yes: b("y", "yes", "y", "Y", "enter"),
		No:  b("n", "no", "n", "N", "esc"),
	}
}

// handleKey routes a key press: overlays first, then the current view and
// focus. ctrl+c is contextual so it never loses work (see ctrlC).
func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	if msg.String() == "ctrl+c" {
		return m.ctrlC()
	}
	switch m.overlay {
	case ovHelp:
		// The help scrolls; any other key closes it and never triggers
		// anything else.
		m.helpKey(msg)
		return nil
	case ovConfirmCancel:
		switch {
		case key.Matches(msg, k.Yes):
			m.overlay = ovNone
			return m.cancelRun()
		case key.Matches(msg, k.No):
			m.overlay = ovNone
			m.setFlash("run continues", false)
		}
		return nil
	case ovSearch:
		return m.searchKey(msg)
	case ovFilter:
		return m.filterKey(msg)
	case ovNewTask:
		return m.newTaskKey(msg)
	case ovFind:
		return m.findKey(msg)
	}
	if m.mode == modeList {
		return m.listKey(msg)
	}
	switch m.focus {
	case focusComposer:
		return m.composerKey(msg)
	case focusHeld:
		return m.heldKey(msg)
	}
	return m.transcriptKey(msg)
}

// ctrlC: clear the composer if it has text (kept in history, so ↑ brings
// it back), else ask to cancel a busy run (where the backend can), else
// quit.
func (m *Model) ctrlC() tea.Cmd {
	switch {
	case m.overlay == ovHelp:
		m.closeHelp()
		return nil
	case m.overlay == ovConfirmCancel:
		m.overlay = ovNone
		return nil
	case m.overlay == ovSearch || m.overlay == ovFilter || m.overlay == ovFind:
		m.overlay = ovNone
		return nil
	case m.overlay == ovNewTask:
		m.closeNewTask()
		return nil
	case m.mode == modeTask && m.held.editing != "":
		m.cancelEdit()
		return nil
	case m.mode == modeTask && m.comp.value() != "":
		// Whatever has focus: quitting here would drop unsent text.
		m.comp.stash()
		m.setFlash("cleared — ↑ brings it back", false)
		return nil
	case m.mode == modeTask && m.busy() && m.caps.Cancel:
		m.askCancel()
		return nil
	}
	m.quitting = true
	return nil
}

// handlePaste sends pasted text to whichever input is active; in the
// transcript it focuses the composer first, so a paste is never dropped.
func (m *Model) handlePaste(msg tea.PasteMsg) tea.Cmd {
	switch m.overlay {
	case ovSearch:
		m.search.input += oneLine(msg.Content)
		return nil
	case ovFilter:
		if m.board != nil && m.mode == modeList {
			m.board.filter.Text += oneLine(msg.Content)
			return m.refreshBoard()
		}
		m.list.filter += oneLine(msg.Content)
		m.list.refilter()
		return nil
	case ovNewTask:
		return m.newTask.update(msg)
	case ovFind:
		m.find.input += oneLine(msg.Content)
		m.find.results = false
		return nil
	}
	if m.mode != modeTask || !m.caps.Send {
		return nil
	}
	m.overlay = ovNone
	cmd := m.focusComposer()
	return tea.Batch(cmd, m.comp.update(msg))
}

// forwardToInput hands component messages (e.g. cursor blinks) to the
// focused text input.
func (m *Model) forwardToInput(msg tea.Msg) tea.Cmd {
	switch {
	case m.overlay == ovNewTask:
		return m.newTask.update(msg)
	case m.mode == modeTask && m.focus == focusComposer:
		return m.comp.update(msg)
	}
	return nil
}
