package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/tui/chrome"
)

// segment is one piece of the status bar; the lowest priority goes first
// when the bar does not fit.
type segment = chrome.Segment

// layoutSegments joins segments in order with a separator, dropping the
// least important until the line fits in w cells.
func layoutSegments(segs []segment, sep string, w int) string {
	return chrome.LayoutSegments(segs, sep, w)
}

// connText describes a stream's connection, with a live countdown while
// reconnecting.
func (m *Model) connText(c connState, seen bool) string {
	if !seen {
		return m.ch.Connecting()
	}
	switch c.Phase {
	case sse.PhaseLive:
		return m.ch.OK.Render("● live")
	case sse.PhaseConnecting:
		return m.ch.Connecting()
	case sse.PhaseReconnecting:
		left := c.RetryIn
		if !c.Since.IsZero() {
			left -= m.now.Sub(c.Since)
		}
		s := "⟳ reconnecting in " + itoa(int((max(left, 0)+time.Second-1)/time.Second)) + "s"
		if c.Attempt > 1 {
			s += " (try " + itoa(c.Attempt) + ")"
		}
		if c.Err != nil {
			s += " · " + oneLine(c.Err.Error())
		}
		return m.ch.Warn.Render(s)
	}
	return m.ch.Err.Render("✗ " + oneLine(c.String()))
}

// statusLine is the task view's status bar: connection, run state with
// elapsed time, name, model, context and token totals, cwd.
func (m *Model) statusLine() string {
	meta := m.tl.Meta()
	var run string
	switch m.tl.Status() {
	case events.RunGenerating:
		if m.streamGone() {
			// The stream failed for good mid-run: the connection segment
			// says why; the run state is only what was last seen.
			run = m.ch.Dim.Render("? last seen generating")
			break
		}
		run = spinnerFrame(m.spin.frame) + " generating"
		if !meta.RunStarted.IsZero() {
			run += " " + humanDuration(m.now.Sub(meta.RunStarted))
		}
		if m.canceling {
			run += " · cancelling…"
		}
		run = m.ch.Accent.Render(run)
	case events.RunStopped:
		run = m.ch.Dim.Render("■ stopped")
	default:
		run = m.ch.OK.Render("✓ idle")
	}
	model := oneLine(orString(meta.Model, m.task.Model))
	var ctx, tok string
	if meta.ContextTokens > 0 {
		ctx = "ctx " + tokens(meta.ContextTokens)
	}
	if t := meta.Totals; t.InputTokens+t.OutputTokens > 0 {
		tok = "↑" + tokens(t.InputTokens) + " ↓" + tokens(t.OutputTokens)
	}
	if t := meta.Totals; t.HasCost && t.CostUSD > 0 {
		// Only where the source reports cost.
		tok = strings.TrimSpace(tok + " " + events.CostText(t.CostUSD))
	}
	name := orString(m.task.Name, shortID(m.task.ID))
	segs := []segment{
		{Text: m.connText(m.conn, m.connSeen), Prio: 9},
		{Text: styled(m.ch.Dim, oneLine(m.caps.Backend)), Prio: 6},
		{Text: run, Prio: 8},
		// Context and token totals matter more while following a run
		// than the name (shown in the task list) and the model.
		{Text: styled(m.ch.Bold, truncate(oneLine(name), max(m.w/5, 8))), Prio: 3},
		{Text: styled(m.ch.Dim, model), Prio: 4},
		{Text: styled(m.ch.Dim, ctx), Prio: 7},
		{Text: styled(m.ch.Dim, tok), Prio: 6},
		{Text: styled(m.ch.Dim, truncLeft(shortPath(oneLine(m.task.Cwd), m.cfg.Home), max(m.w/4, 10))), Prio: 5},
	}
	return layoutSegments(segs, m.ch.Faint.Render(" · "), m.w)
}

// hints renders a hints row (chrome.Hints).
func (m *Model) hints(hs ...chrome.Hint) string { return m.ch.Hints(m.w, hs...) }

// Hints of each priority: minor ones drop first on a narrow terminal,
// vital ones (help, the way back) never.
func minor(k, d string) chrome.Hint { return chrome.Hint{Key: k, Desc: d, Prio: chrome.HintMinor} }
func major(k, d string) chrome.Hint { return chrome.Hint{Key: k, Desc: d, Prio: chrome.HintMajor} }
func vital(k, d string) chrome.Hint { return chrome.Hint{Key: k, Desc: d, Prio: chrome.HintVital} }

// hintsLine is the bottom row: a question, the search input, or the keys
// of the current mode, after a flash message if one shows. It returns the
// cursor when the row is an input.
func (m *Model) hintsLine() (string, *tea.Cursor) {
	switch m.overlay {
	case ovConfirmCancel:
		q := m.ch.BadgeAlert.Render("cancel the run?")
		rest := " queued messages come back as held messages  " + m.ch.Key.Render("y") + " yes · " + m.ch.Key.Render("n") + " no"
		return truncate(q+rest, m.w), nil
	case ovSearch:
		return m.searchLine()
	}
	hs := m.keyHints()
	if m.flash.text != "" {
		return m.ch.FlashRow(m.w, m.flash.text, m.flash.err, hs...), nil
	}
	return m.hints(hs...), nil
}

// keyHints are the keys of the current mode and focus, in the order shown.
func (m *Model) keyHints() []chrome.Hint {
	k := &m.keys
	if m.overlay == ovHelp {
		return []chrome.Hint{major("↑/↓ pgup/pgdn", "scroll"), vital("esc", "close")}
	}
	if m.mode == modeList {
		return chrome.ListHints(m.caps.Create)
	}
	if m.focus == focusHeld {
		pause := "pause"
		if m.held.paused() {
			pause = "resume"
		}
		return []chrome.Hint{major("e", "edit"), major("d", "delete"), minor("J/K", "move"), minor("c", "to composer"),
			major("s", "send now"), minor("p", pause), vital("esc", "composer"), vital("f1", "keys")}
	}
	if m.focus == focusComposer {
		if m.held.editing != "" {
			return []chrome.Hint{major("enter", "save"), vital("esc", "cancel the edit"), minor("shift+enter", "newline"),
				vital("f1", "keys")}
		}
		send := "send"
		if m.busy() {
			send = "queue"
		}
		hs := []chrome.Hint{major("enter", send), major("ctrl+g", "hold"), minor("shift+enter", "newline")}
		if len(m.held.pending()) > 0 {
			hs = append(hs, major("shift+tab", "held"))
		}
		if m.busy() && m.caps.Cancel {
			hs = append(hs, major("ctrl+x", "cancel run"))
		}
		hs = append(hs, minor("↑", "history"), minor(k.Editor.Help().Key, "editor"))
		if m.caps.WebSearch {
			hs = append(hs, minor("ctrl+s", "web"))
		}
		return append(hs, vital(k.Leave.Help().Key, "transcript"), vital("f1", "keys"))
	}
	var hs []chrome.Hint
	if m.caps.Send {
		hs = append(hs, major("tab", "write"))
	}
	hs = append(hs, minor("j/k", "scroll"), major("[/]", "select"), major("enter", "expand"), major("/", "search"))
	if m.caps.Send && len(m.held.pending()) > 0 {
		hs = append(hs, major("H", "held"))
	}
	if m.search.query != "" {
		hs = append(hs, major("n/N", "next/prev"))
	}
	return append(hs, minor("y", "copy"), minor("t", "todos"), vital(k.Back.Help().Key, "tasks"), vital(k.Help.Help().Key, "keys"))
}

// styled renders s, or nothing at all when s is empty (an empty styled
// string still carries escape codes, which would make a segment "present").
func styled(st lipgloss.Style, s string) string { return chrome.Styled(st, s) }
