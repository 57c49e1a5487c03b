package tui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// helpAll is the whole `?` screen: every key, grouped by where it works.
func (m *Model) helpAll() []string {
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
			k.Expand, k.Search, k.NextMatch, k.PrevMatch, k.Copy, k.CopyCode, k.CopyLines, k.Thinking}},
		{"transcript: panels", []key.Binding{k.Todos, k.Queue, k.Held, k.Compose, k.Editor, k.CancelRun, k.Retry, k.Back, k.Help, k.Quit}},
		{"composer", []key.Binding{k.Send, k.Hold, k.Editor, k.Newline, k.History, k.WebSearch, k.Leave, k.ToHeld, k.CancelRun,
			k.Retry, k.QueueToggle, k.TodosToggle, k.ScrollPage,
			key.NewBinding(key.WithHelp("ctrl+c", "clear · cancel · quit")),
			key.NewBinding(key.WithHelp(m.helpKeyLabel(), "this help"))}},
		{"held messages", []key.Binding{k.HeldUp, k.HeldMoveUp, k.HeldMoveDown, k.HeldEdit, k.HeldDelete,
			k.HeldToComposer, k.HeldAdopt, k.HeldRelease, k.HeldPause, k.HeldBack}},
		{"task list", slices.Concat([]key.Binding{k.ListUp, k.ListDown, k.ListTop, k.ListBottom, k.ListPgUp, k.ListPgDown, k.Attach, k.NewTask,
			k.Filter}, m.findKeys(), []key.Binding{k.Refresh, k.Quit})},
	}
	if m.board != nil {
		// Several sources: the board stands where the task list does.
		groups[len(groups)-1] = group{"board", slices.Concat([]key.Binding{k.ListUp, k.ListDown, k.ListTop, k.ListBottom, k.ListPgUp, k.ListPgDown,
			k.Attach, k.Filter}, m.findKeys(), []key.Binding{k.BoardStatus, k.BoardSource,
			key.NewBinding(key.WithHelp("esc", "clear the filters")), k.Quit})}
	}
	if m.mode == modeList {
		// On the list or the board, its keys come first.
		groups = append(groups[len(groups)-1:], groups[:len(groups)-1]...)
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
	for len(out) > 0 && strings.TrimSpace(ansi.Strip(out[len(out)-1])) == "" {
		out = out[:len(out)-1]
	}
	return out
}

// helpLines is the `?` screen in h rows, scrolled to m.helpOff. When it
// does not fit, the last row says where the view is and how to see the
// rest, so every key is reachable at any size.
func (m *Model) helpLines(h int) []string {
	all := m.helpAll()
	if h <= 0 {
		return nil
	}
	var out []string
	if len(all) <= h {
		out = all
	} else {
		rows := h - 1
		off := min(max(m.helpOff, 0), len(all)-rows)
		out = append(out, all[off:off+rows]...)
		where := "↕"
		switch {
		case off == 0:
			where = "↓ more below"
		case off+rows == len(all):
			where = "↑ more above"
		}
		out = append(out, m.ch.Dim.Render(truncate(" "+where+" · lines "+itoa(off+1)+"–"+itoa(off+rows)+" of "+itoa(len(all))+
			" · ↑/↓ pgup/pgdn scroll", m.w)))
	}
	for len(out) < h {
		out = append(out, "")
	}
	return out
}

// helpHeight is the rows the `?` screen gets: all but the hints row, and
// the status bar in the task view.
func (m *Model) helpHeight() int {
	if m.mode == modeList {
		return max(m.h-1, 0)
	}
	l := m.layout()
	return max(m.h-l.status-l.hints, 0)
}

// helpKey scrolls the `?` screen with the transcript's movement keys; any
// other key closes it and does nothing else.
func (m *Model) helpKey(msg tea.KeyPressMsg) {
	k := &m.keys
	page := max(m.helpHeight()-2, 1)
	switch {
	case key.Matches(msg, k.Down):
		m.scrollHelp(1)
	case key.Matches(msg, k.Up):
		m.scrollHelp(-1)
	case key.Matches(msg, k.PageDown), key.Matches(msg, k.HalfDown):
		m.scrollHelp(page)
	case key.Matches(msg, k.PageUp), key.Matches(msg, k.HalfUp):
		m.scrollHelp(-page)
	case key.Matches(msg, k.Top):
		m.scrollHelp(-len(m.helpAll()))
	case key.Matches(msg, k.Bottom):
		m.scrollHelp(len(m.helpAll()))
	default:
		m.closeHelp()
	}
}

// scrollHelp moves the `?` screen by d rows, within its lines.
func (m *Model) scrollHelp(d int) {
	// The most it scrolls: the last rows fill the screen above the
	// indicator row.
	last := max(len(m.helpAll())-max(m.helpHeight()-1, 1), 0)
	m.helpOff = min(max(m.helpOff+d, 0), last)
}

// closeHelp closes the `?` screen; it opens at the top next time.
func (m *Model) closeHelp() {
	m.overlay = ovNone
	m.helpOff = 0
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

// findKeys is the search across sessions' key, where the UI has an index
// to search (Config.Search).
func (m *Model) findKeys() []key.Binding {
	if m.cfg.Search == nil {
		return nil
	}
	return []key.Binding{m.keys.FindAll}
}
