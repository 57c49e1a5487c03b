package tui

import (
	"strings"

	"github.com/perch-tui/perch/events"
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
	done := 0
	for _, t := range todos {
		if t.Status == "completed" {
			done++
		}
	}
	out := []string{truncate(m.ch.Title.Render("todos ")+m.ch.Dim.Render(itoa(done)+"/"+itoa(len(todos))+" done · t hides"), m.w)}
	for _, t := range todos {
		out = append(out, truncate(" "+todoIcon(m, t)+" "+oneLine(t.Content), m.w))
	}
	return out
}

func todoIcon(m *Model, t events.Todo) string {
	switch strings.ToLower(t.Status) {
	case "completed":
		return m.ch.OK.Render("●")
	case "in_progress", "inprogress":
		return m.ch.Accent.Render("◐")
	}
	return m.ch.Dim.Render("○")
}
