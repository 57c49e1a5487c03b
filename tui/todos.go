package tui

import (
	"github.com/perch-tui/perch/tui/render"
)

// todoLines is the compact todo panel at the top of the task view (toggled
// with t / ctrl+t), at most h rows.
func (m *Model) todoLines(h int) []string {
	ls := m.todoPanel()
	if len(ls) > h {
		ls = ls[:h]
	}
	return ls
}

func (m *Model) todoHeight() int { return len(m.todoPanel()) }

func (m *Model) todoPanel() []string {
	todos := m.tl.Todos()
	if len(todos) == 0 {
		return nil
	}
	return render.TodoPanel(todos, m.w, m.ch.St)
}
