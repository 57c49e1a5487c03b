package tui

import (
	"charm.land/bubbles/v2/key"
)

// helpLines is the `?` screen: every key, grouped by where it works.
func (m *Model) helpLines(h int) []string {
	k := &m.keys
	type group struct {
		title string
		keys  []key.Binding
	}
	groups := []group{
		{"transcript: move", []key.Binding{k.Down, k.Up, k.PageDown, k.PageUp, k.HalfDown, k.HalfUp, k.Top, k.Bottom,
			key.NewBinding(key.WithHelp("wheel", "scroll")),
			key.NewBinding(key.WithHelp("click", "select · again: expand")),
			key.NewBinding(key.WithHelp("shift+drag", "select text"))}},
		{"transcript: items", []key.Binding{k.PrevItem, k.NextItem, k.PrevUser, k.NextUser, k.NextErr, k.PrevErr,
			k.Expand, k.Search, k.NextMatch, k.PrevMatch, k.Copy}},
		{"transcript: panels", []key.Binding{k.Todos, k.Queue, k.Held, k.Compose, k.Editor, k.CancelRun, k.Retry, k.Back, k.Quit}},
		{"composer", []key.Binding{k.Send, k.Hold, k.Editor, k.Newline, k.History, k.WebSearch, k.Leave, k.ToHeld, k.CancelRun,
			k.Retry, k.QueueToggle, k.TodosToggle, k.ScrollPage,
			key.NewBinding(key.WithHelp("ctrl+c", "clear · cancel · quit")),
			key.NewBinding(key.WithHelp("f1", "this help"))}},
		{"held messages", []key.Binding{k.HeldUp, k.HeldMoveUp, k.HeldMoveDown, k.HeldEdit, k.HeldDelete,
			k.HeldToComposer, k.HeldRelease, k.HeldPause, k.HeldBack}},
		{"task list", []key.Binding{k.ListUp, k.ListDown, k.ListTop, k.ListBottom, k.Attach, k.NewTask,
			k.Filter, k.Refresh, k.Quit}},
	}
	var cols [][]string
	for _, g := range groups {
		col := []string{m.ch.Title.Render(g.title)}
		if (g.title == "composer" || g.title == "held messages") && !m.caps.Send {
			continue
		}
		for _, b := range g.keys {
			if len(b.Keys()) > 0 && !b.Enabled() {
				continue // an action this backend cannot do
			}
			hl := b.Help()
			col = append(col, fit(m.ch.Key.Render(hl.Key), 12)+" "+m.ch.Hint.Render(hl.Desc))
		}
		cols = append(cols, append(col, ""))
	}
	// Lay the groups out in as many columns as fit (each 40 cells).
	const colW = 40
	ncol := max(min(m.w/colW, len(cols)), 1)
	var out []string
	for start := 0; start < len(cols); start += ncol {
		end := min(start+ncol, len(cols))
		rows := 0
		for _, c := range cols[start:end] {
			rows = max(rows, len(c))
		}
		for r := 0; r < rows; r++ {
			line := ""
			for ci, c := range cols[start:end] {
				cell := ""
				if r < len(c) {
					cell = c[r]
				}
				if ci < end-start-1 {
					cell = fit(cell, colW)
				}
				line += cell
			}
			out = append(out, truncate(" "+line, m.w))
		}
	}
	if len(out) > h {
		out = out[:h]
		if h > 0 {
			out[h-1] = m.ch.Dim.Render(truncate(" … (enlarge the terminal to see all keys)", m.w))
		}
	}
	for len(out) < h {
		out = append(out, "")
	}
	return out
}

// listHelpView is the `?` screen over the task list: the keys, then the
// "any key closes" hint on the last row.
func (m *Model) listHelpView() []string {
	if m.h < 2 {
		line, _ := m.hintsLine()
		return []string{line}
	}
	out := m.helpLines(m.h - 1)
	line, _ := m.hintsLine()
	return append(out, line)
}
