package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/tui/chrome"
)

// newTaskForm is the `n` form of the task list: a working directory
// (defaulting to Config.Cwd) and the first message. Closing it keeps what
// was typed; a failed create keeps it too, with the error.
type newTaskForm struct {
	cwd      textinput.Model
	msg      composer
	field    int // 0 = message, 1 = cwd
	err      error
	creating bool
	width    int
	trimmed  int // rows cut from the top in the last frame (tiny terminals)
}

type createDoneMsg struct {
	task events.Task
	err  error
}

func newNewTaskForm(t themeKind, newline key.Binding) newTaskForm {
	ti := textinput.New()
	ti.Prompt = ""
	ti.SetVirtualCursor(false)
	f := newTaskForm{cwd: ti, msg: newComposer(t, newline)}
	f.msg.ta.Placeholder = "What should the agent do?"
	f.msg.blur()
	return f
}

func (f *newTaskForm) setTheme(t themeKind) {
	f.msg.setTheme(t)
	f.cwd.SetStyles(textinput.DefaultStyles(t != themeLight))
}

func (f *newTaskForm) setWidth(w int) {
	f.width = w
	f.msg.setSize(w, 5)
	f.cwd.SetWidth(max(w-7, 1))
}

func (f *newTaskForm) update(msg tea.Msg) tea.Cmd {
	if f.field == 1 {
		var cmd tea.Cmd
		f.cwd, cmd = f.cwd.Update(msg)
		return cmd
	}
	return f.msg.update(msg)
}

func (f *newTaskForm) focusField(i int) tea.Cmd {
	f.field = i
	if i == 1 {
		f.msg.blur()
		return f.cwd.Focus()
	}
	f.cwd.Blur()
	return f.msg.focus()
}

func (m *Model) openNewTask() tea.Cmd {
	m.overlay = ovNewTask
	if m.newTask.cwd.Value() == "" {
		m.newTask.cwd.SetValue(m.cfg.Cwd)
		m.newTask.cwd.CursorEnd()
	}
	m.newTask.err = nil
	return m.newTask.focusField(0)
}

func (m *Model) closeNewTask() {
	m.overlay = ovNone
	m.newTask.msg.blur()
	m.newTask.cwd.Blur()
}

func (m *Model) newTaskKey(msg tea.KeyPressMsg) tea.Cmd {
	f := &m.newTask
	switch msg.String() {
	case "esc":
		m.closeNewTask()
		return nil
	case "tab", "shift+tab":
		return f.focusField(1 - f.field)
	case "ctrl+s":
		if m.caps.WebSearch {
			f.msg.web = !f.msg.web
		}
		return nil
	case "enter":
		if f.field == 1 {
			return f.focusField(0)
		}
		return m.createTask()
	}
	return f.update(msg)
}

func (m *Model) createTask() tea.Cmd {
	f := &m.newTask
	text := f.msg.value()
	if strings.TrimSpace(text) == "" || f.creating {
		return nil
	}
	f.creating, f.err = true, nil
	req := client.CreateRequest{
		Name:      firstLine(strings.TrimSpace(text)),
		Model:     m.cfg.Model,
		Cwd:       strings.TrimSpace(f.cwd.Value()),
		Prompt:    text,
		WebSearch: f.msg.web,
	}
	if len(req.Name) > 80 {
		req.Name = truncate(req.Name, 80)
	}
	return func() tea.Msg {
		ctx, cancel := m.callCtx()
		defer cancel()
		t, err := m.b.Create(ctx, req)
		return createDoneMsg{task: t, err: err}
	}
}

func (m *Model) handleCreateDone(msg createDoneMsg) tea.Cmd {
	f := &m.newTask
	f.creating = false
	if msg.err != nil {
		f.err = msg.err
		m.setFlash("task not created: "+msg.err.Error(), true)
		return nil
	}
	f.msg.reset()
	f.err = nil
	m.overlay = ovNone
	m.list.upsert(msg.task)
	return m.attach(msg.task)
}

// newTaskLines draws the form in at most maxH rows.
func (m *Model) newTaskLines(maxH int) []string {
	f := &m.newTask
	if maxH < 3 {
		maxH = min(maxH, 1)
	}
	var out []string
	title := " new task "
	if f.creating {
		title = " creating… "
	}
	out = append(out, m.ch.RuleFocused.Render(fit("──"+title+strings.Repeat("─", max(m.w, 0)), m.w)))
	label := m.ch.Dim.Render("cwd  ")
	if f.field == 1 {
		label = m.ch.Accent.Render("cwd  ")
	}
	out = append(out, truncate(label+f.cwd.View(), m.w))
	msgH := max(min(f.msg.height(5), maxH-len(out)-1), 1)
	out = append(out, f.msg.lines(msgH)...)
	if f.err != nil {
		out = append(out, truncate(m.ch.Err.Render("✗ "+errText(f.err)+" — enter to retry"), m.w))
	}
	f.trimmed = 0
	if len(out) > maxH {
		f.trimmed = len(out) - maxH
		out = out[f.trimmed:]
	}
	return out
}

func (m *Model) newTaskHints() string {
	hs := []chrome.Hint{major("enter", "create"), minor("shift+enter", "newline"), major("tab", "cwd/message")}
	if m.caps.WebSearch {
		web := "web off"
		if m.newTask.msg.web {
			web = "web on"
		}
		hs = append(hs, minor("ctrl+s", web))
	}
	return m.hints(append(hs, vital("esc", "close (kept)"))...)
}

// newTaskCursor places the terminal cursor in the form's focused field;
// top is the form's first row on screen.
func (m *Model) newTaskCursor(top int) *tea.Cursor {
	f := &m.newTask
	if f.field == 1 {
		if c := f.cwd.Cursor(); c != nil {
			c.X += 5
			c.Y = top + 1
			return c
		}
		return nil
	}
	if c := f.msg.cursor(); c != nil {
		c.Y += top + 2
		return c
	}
	return nil
}
