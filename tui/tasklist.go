package tui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/tui/chrome"
)

// taskList is the live list of the daemon's tasks: replaced by
// daemon.tasks.synchronized, upserted by daemon.task.changed and by GET
// results.
type taskList struct {
	tasks  []events.Task // sorted, newest first
	shown  []int         // indexes into tasks passing the filter
	filter string
	sel    int // index into shown
	selID  string
	offset int // first shown row at the top of the viewport
	synced bool
	// answered: a list (GET or the stream's sync) or a failure to get one
	// came; until then an empty list is one still loading, not one
	// without tasks.
	answered bool
	// loadErr is why the last GET of the list failed (nil once a list
	// came).
	loadErr error
	rows    int // rows per page, from the last frame
	// held and gone: perch's own messages per task, and for sessions
	// that are gone (heldCountsCmd).
	held map[string]chrome.Held
	gone chrome.Held
	// first/last shown rows of the last frame, for the spinner
	visFrom, visTo int
}

func (l *taskList) byID(id string) (events.Task, bool) {
	for _, t := range l.tasks {
		if t.ID == id {
			return t, true
		}
	}
	return events.Task{}, false
}

func (l *taskList) replace(ts []events.Task) {
	l.tasks = append(l.tasks[:0:0], ts...)
	l.synced, l.answered, l.loadErr = true, true, nil
	l.resort()
}

// load takes a GET /tasks result: a full replacement until the stream has
// synced, then only upserts (the stream is newer).
func (l *taskList) load(ts []events.Task) {
	l.answered, l.loadErr = true, nil
	if !l.synced {
		l.tasks = append(l.tasks[:0:0], ts...)
		l.resort()
		return
	}
	for _, t := range ts {
		l.upsert(t)
	}
}

func (l *taskList) upsert(t events.Task) {
	for i := range l.tasks {
		if l.tasks[i].ID == t.ID {
			l.tasks[i] = l.tasks[i].Merge(t)
			l.resort()
			return
		}
	}
	l.tasks = append(l.tasks, t)
	l.resort()
}

// resort orders tasks newest first (as maria's web UI does) and keeps the
// selection on the same task.
func (l *taskList) resort() {
	chrome.SortTasks(l.tasks)
	l.refilter()
}

func (l *taskList) refilter() {
	l.shown = l.shown[:0]
	q := strings.ToLower(strings.TrimSpace(l.filter))
	for i, t := range l.tasks {
		if q == "" || strings.Contains(strings.ToLower(t.Name+" "+t.Cwd+" "+t.Model+" "+t.ID+" "+t.Status), q) {
			l.shown = append(l.shown, i)
		}
	}
	l.sel = 0
	for i, ti := range l.shown {
		if l.tasks[ti].ID == l.selID {
			l.sel = i
			break
		}
	}
	l.clampSel()
}

func (l *taskList) clampSel() {
	if l.sel >= len(l.shown) {
		l.sel = len(l.shown) - 1
	}
	if l.sel < 0 {
		l.sel = 0
	}
	if t, ok := l.selected(); ok {
		l.selID = t.ID
	}
}

func (l *taskList) selected() (events.Task, bool) {
	if l.sel < 0 || l.sel >= len(l.shown) {
		return events.Task{}, false
	}
	return l.tasks[l.shown[l.sel]], true
}

func (l *taskList) selectID(id string) {
	l.selID = id
	for i, ti := range l.shown {
		if l.tasks[ti].ID == id {
			l.sel = i
			return
		}
	}
}

func (l *taskList) move(d int) {
	l.sel += d
	l.clampSel()
}

func (l *taskList) anyVisibleGenerating() bool {
	for r := l.visFrom; r < l.visTo && r < len(l.shown); r++ {
		if l.tasks[l.shown[r]].Status == events.StatusGenerating {
			return true
		}
	}
	return false
}

// listKey handles keys in the task list.
func (m *Model) listKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.board != nil {
		return m.boardKey(msg)
	}
	k := &m.keys
	l := &m.list
	page := max(l.rows, 1)
	switch {
	case key.Matches(msg, k.Help):
		m.overlay = ovHelp
	case key.Matches(msg, k.Quit):
		m.quitting = true
	case msg.String() == "esc":
		if l.filter != "" {
			l.filter = ""
			l.refilter()
		}
	case key.Matches(msg, k.ListUp):
		l.move(-1)
	case key.Matches(msg, k.ListDown):
		l.move(+1)
	case key.Matches(msg, k.ListPgUp):
		l.move(-page)
	case key.Matches(msg, k.ListPgDown):
		l.move(page)
	case key.Matches(msg, k.ListTop):
		l.sel = 0
		l.clampSel()
	case key.Matches(msg, k.ListBottom):
		l.sel = len(l.shown) - 1
		l.clampSel()
	case key.Matches(msg, k.Attach):
		if t, ok := l.selected(); ok {
			return m.attach(t)
		}
	case key.Matches(msg, k.NewTask):
		return m.openNewTask()
	case key.Matches(msg, k.Filter):
		m.overlay = ovFilter
	case key.Matches(msg, k.FindAll):
		return m.openFind()
	case key.Matches(msg, k.Refresh):
		m.setFlash("refreshing…", false)
		return m.loadTasksCmd()
	}
	return nil
}

// filterKey edits the task filter; the list narrows as you type.
func (m *Model) filterKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.board != nil {
		return m.boardFilterKey(msg)
	}
	l := &m.list
	switch msg.String() {
	case "esc":
		l.filter = ""
		m.overlay = ovNone
	case "enter":
		m.overlay = ovNone
		if t, ok := l.selected(); ok && len(l.shown) == 1 {
			l.refilter()
			return m.attach(t)
		}
	case "up", "ctrl+p":
		l.move(-1)
		return nil
	case "down", "ctrl+n":
		l.move(+1)
		return nil
	case "backspace", "ctrl+h":
		if r := []rune(l.filter); len(r) > 0 {
			l.filter = string(r[:len(r)-1])
		}
	case "ctrl+u":
		l.filter = ""
	default:
		if msg.Text == "" {
			return nil
		}
		l.filter += msg.Text
	}
	l.refilter()
	return nil
}

// listView draws the task list (chrome.TaskList).
func (m *Model) listView() ([]string, *tea.Cursor) {
	l := &m.list
	scr := m.listScreen()
	hints, _ := m.hintsLine()
	if m.overlay == ovNewTask {
		hints = m.newTaskHints()
		scr.Form = m.newTaskLines
	}
	scr.Hints = hints
	out, lay := m.ch.TaskList(chrome.List{Tasks: l.tasks, Shown: l.shown, Sel: l.sel, Offset: l.offset,
		Answered: l.answered, Filter: l.filter, Filtering: m.overlay == ovFilter, Held: l.held, Gone: l.gone}, scr)
	l.rows, l.offset = lay.Rows, lay.Offset
	if len(l.shown) > 0 {
		l.visFrom, l.visTo = lay.VisFrom, lay.VisTo
	}
	var cur *tea.Cursor
	switch {
	case m.overlay == ovNewTask:
		cur = m.newTaskCursor(lay.FormTop - m.newTask.trimmed)
	case m.overlay == ovFilter:
		cur = tea.NewCursor(min(lay.TitleWidth, max(m.w-1, 0)), 0)
	}
	if cur != nil && (cur.Y >= m.h || cur.Y < 0 || cur.X >= m.w) {
		cur = nil
	}
	return out, cur
}

// listScreen is what the task list shows besides the tasks.
func (m *Model) listScreen() chrome.ListScreen {
	return chrome.ListScreen{Width: m.w, Height: m.h, Conn: m.connText(m.daemonConn, m.daemonSeen),
		Backend: m.caps.Backend, Flash: m.flash.text, FlashErr: m.flash.err,
		Now: m.now, Home: m.cfg.Home, Spinner: m.liveSpinner(m.daemonGone()), Unreachable: m.unreachable(),
		Keys: map[string]string{"new_task": m.keyLabel("new_task", "n"), "to_held": m.keyLabel("to_held", "shift+tab"),
			"held_adopt": m.keyLabel("held_adopt", "m"), "held_to_composer": m.keyLabel("held_to_composer", "c")}}
}

// unreachable says, when the server cannot be reached, where perch looked,
// why it failed and what to do: "" while it answers. An unreachable
// server is never shown as one without tasks.
func (m *Model) unreachable() string {
	c := m.daemonConn
	var err error
	switch {
	case m.caps.Replay:
		return ""
	case m.daemonSeen && (c.Phase == sse.PhaseReconnecting || c.Phase == sse.PhaseFailed):
		err = c.Err
	case m.list.loadErr != nil:
		err = m.list.loadErr
	default:
		return ""
	}
	url, _, _ := strings.Cut(m.b.URL(), "?") // a query may hold a token
	s := "cannot reach " + m.b.Name() + " at " + url
	if err != nil {
		s += ": " + errReason(err)
	}
	if c.Phase == sse.PhaseReconnecting {
		s += "\nretrying in " + itoa(m.retryLeft(c)) + "s"
	}
	return s + "\nis it running? start it, give another server with --url, or try perch without one: perch demo"
}

// heldCountsMsg: perch's messages per task, counted by heldCountsCmd.
type heldCountsMsg struct {
	held map[string]chrome.Held
	gone chrome.Held
}

// heldCountsCmd counts perch's messages for the listed tasks (held, and
// orphans among them) and those of sessions that are gone
// (outbox.TakeCensus). It reads the store: a command, never Update.
func (m *Model) heldCountsCmd() tea.Cmd {
	if _, ok := m.ob.store.(outbox.Lister); !ok || !m.list.answered {
		return nil // before a list answered a missing id is not known yet, not gone
	}
	store, tasks := m.ob.store, slices.Clone(m.list.tasks)
	return func() tea.Msg {
		c, err := outbox.TakeCensus(store, tasks)
		if err != nil {
			return nil
		}
		out := heldCountsMsg{held: make(map[string]chrome.Held, len(c.Held))}
		for id, k := range c.Held {
			out.held[id] = chrome.Held{Held: k.Held, Orphans: k.Orphans}
		}
		for _, k := range c.Gone {
			out.gone.Held += k.Held
			out.gone.Orphans += k.Orphans
			out.gone.Sessions++
		}
		return out
	}
}
