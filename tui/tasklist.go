package tui

import (
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/events"
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
	rows     int // rows per page, from the last frame
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
	l.synced, l.answered = true, true
	l.resort()
}

// load takes a GET /tasks result: a full replacement until the stream has
// synced, then only upserts (the stream is newer).
func (l *taskList) load(ts []events.Task) {
	l.answered = true
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
	sort.SliceStable(l.tasks, func(i, j int) bool {
		a, b := l.tasks[i], l.tasks[j]
		if !a.Created.Equal(b.Created) {
			return a.Created.After(b.Created)
		}
		return a.ID < b.ID
	})
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
	case key.Matches(msg, k.Refresh):
		m.setFlash("refreshing…", false)
		return m.loadTasksCmd()
	}
	return nil
}

// filterKey edits the task filter; the list narrows as you type.
func (m *Model) filterKey(msg tea.KeyPressMsg) tea.Cmd {
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

// listView draws the task list: a header, two rows per task, the daemon
// connection and hints.
func (m *Model) listView() ([]string, *tea.Cursor) {
	w, h := m.w, m.h
	l := &m.list
	out := make([]string, 0, h)

	// header
	title := m.ch.Title.Render("perch") + m.ch.Dim.Render(" · tasks "+itoa(len(l.shown)))
	if len(l.shown) != len(l.tasks) {
		title += m.ch.Dim.Render("/" + itoa(len(l.tasks)))
	}
	var cur *tea.Cursor
	switch {
	case m.overlay == ovFilter:
		title += "  " + m.ch.Accent.Render("/") + l.filter
		cur = tea.NewCursor(min(lineWidth(title), max(w-1, 0)), 0)
	case l.filter != "":
		title += "  " + m.ch.Dim.Render("filter: ") + l.filter + m.ch.Hint.Render(" (esc clears)")
	}
	out = append(out, spread(title, m.connText(m.daemonConn, m.daemonSeen), w))

	footer := 1
	if h >= 8 {
		footer = 2
	}
	var form []string
	if m.overlay == ovNewTask {
		form = m.newTaskLines(max(h-1-footer, 0))
	}
	rowsH := max(h-1-footer-len(form), 0)
	per := 2
	if rowsH < 6 {
		per = 1
	}
	l.rows = max(rowsH/per, 1)
	if len(l.shown) == 0 {
		msg := "no tasks yet — press n to start one"
		if !l.answered {
			msg = "loading tasks…"
		}
		if l.filter != "" {
			msg = "no task matches “" + l.filter + "”"
		}
		for i := 0; i < rowsH; i++ {
			if i == rowsH/2 {
				out = append(out, centre(m.ch.Dim.Render(msg), w))
			} else {
				out = append(out, "")
			}
		}
	} else {
		// keep the selection in view
		if l.sel < l.offset {
			l.offset = l.sel
		}
		if l.sel >= l.offset+l.rows {
			l.offset = l.sel - l.rows + 1
		}
		l.offset = max(min(l.offset, len(l.shown)-l.rows), 0)
		l.visFrom, l.visTo = l.offset, min(l.offset+l.rows, len(l.shown))
		for r := l.visFrom; r < l.visTo; r++ {
			out = append(out, m.taskRow(l.tasks[l.shown[r]], r == l.sel, per)...)
		}
		for len(out) < 1+rowsH {
			out = append(out, "")
		}
		out = out[:1+rowsH]
	}
	if len(form) > 0 {
		cur = m.newTaskCursor(len(out) - m.newTask.trimmed)
	}
	out = append(out, form...)
	status := m.listStatus()
	if footer == 2 {
		out = append(out, status)
		hints, _ := m.hintsLine()
		if m.overlay == ovNewTask {
			hints = m.newTaskHints()
		}
		out = append(out, hints)
	} else {
		out = append(out, status)
	}
	for len(out) < h {
		out = append(out, "")
	}
	if cur != nil && (cur.Y >= h || cur.Y < 0 || cur.X >= w) {
		cur = nil
	}
	return out[:h], cur
}

// listStatus summarises the daemon: how many tasks run, the connection.
func (m *Model) listStatus() string {
	gen, idle, stopped := 0, 0, 0
	for _, t := range m.list.tasks {
		switch t.Status {
		case events.StatusGenerating:
			gen++
		case events.StatusStopped:
			stopped++
		default:
			idle++
		}
	}
	segs := []segment{
		{m.connText(m.daemonConn, m.daemonSeen), 9},
		{styled(m.ch.Bold, oneLine(m.caps.Backend)), 6},
		{m.ch.Accent.Render(itoa(gen) + " generating"), 5},
		{m.ch.Dim.Render(itoa(idle) + " idle"), 4},
		{m.ch.Dim.Render(itoa(stopped) + " stopped"), 3},
	}
	if m.flash.text != "" {
		st := m.ch.Flash
		if m.flash.err {
			st = m.ch.FlashErr
		}
		segs = append(segs, segment{st.Render(m.flash.text), 8})
	}
	return layoutSegments(segs, m.ch.Faint.Render(" · "), m.w)
}

// taskRow draws one task: icon, name, queue length and age on the first
// row; cwd and model dimmed on the second.
func (m *Model) taskRow(t events.Task, selected bool, per int) []string {
	w := m.w
	gutter := "  "
	if selected {
		gutter = m.ch.SelectedGutter.Render("▌") + " "
	}
	var icon string
	switch t.Status {
	case events.StatusGenerating:
		icon = m.ch.Accent.Render(orString(m.liveSpinner(m.daemonGone()), "●"))
	case events.StatusStopped:
		icon = m.ch.Dim.Render("■")
	default:
		icon = m.ch.OK.Render("✓")
	}
	name := oneLine(t.Name)
	if name == "" {
		name = m.ch.Dim.Render("(unnamed " + shortID(t.ID) + ")")
	} else if selected {
		name = m.ch.Bold.Render(name)
	}
	var right []string
	if n := len(t.QueuedMessages); n > 0 {
		right = append(right, m.ch.Warn.Render("⧗"+itoa(n)))
	}
	if a := age(orTime(t.Updated, t.Created), m.now); a != "" {
		right = append(right, m.ch.Dim.Render(a))
	}
	r := strings.Join(right, " ")
	line1 := gutter + icon + " "
	first := spread(name, r, max(w-lineWidth(line1), 1))
	line1 = truncate(line1+first, w)
	where := shortPath(oneLine(t.Cwd), m.cfg.Home)
	detail := m.ch.Dim.Render(truncLeft(where, max(w/2, 10)))
	if t.Model != "" {
		detail += m.ch.Faint.Render(" · ") + m.ch.Dim.Render(oneLine(t.Model))
	}
	if per == 1 {
		return []string{line1}
	}
	return []string{line1, truncate(gutter+"  "+detail, w)}
}

func orTime(a, b time.Time) time.Time {
	if a.IsZero() {
		return b
	}
	return a
}
