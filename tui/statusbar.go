package tui

import (
	"errors"
	"net/http"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/styles"
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
// reconnecting: live, retrying in N s, task gone, disconnected, each
// with the reason a person acts on (errReason) rather than the URL; a
// file (client.Capabilities.Recording) is a replay, never live.
func (m *Model) connText(c connState, seen bool) string {
	if m.caps.Replay {
		return m.ch.Dim.Render("▶ replay")
	}
	if !seen {
		return m.ch.Connecting()
	}
	switch c.Phase {
	case sse.PhaseLive:
		return m.ch.OK.Render("● live")
	case sse.PhaseConnecting:
		return m.ch.Connecting()
	case sse.PhaseReconnecting:
		s := "⟳ disconnected · retrying in " + itoa(m.retryLeft(c)) + "s"
		if c.Attempt > 1 {
			s += " (try " + itoa(c.Attempt) + ")"
		}
		if c.Err != nil {
			s += " · " + errReason(c.Err)
		}
		return m.ch.Warn.Render(s)
	}
	return m.ch.Err.Render("✗ " + m.failedText(c))
}

// retryLeft is how many seconds (rounded up) are left before a
// reconnecting stream tries again.
func (m *Model) retryLeft(c connState) int {
	left := c.RetryIn
	if !c.Since.IsZero() {
		left -= m.now.Sub(c.Since)
	}
	return int((max(left, 0) + time.Second - 1) / time.Second)
}

// failedText is a stream that failed for good, in a few words: the task
// is gone (the server does not know it), or disconnected, and why.
func (m *Model) failedText(c connState) string {
	if m.mode == modeTask && taskGone(c.Err) {
		return "task gone · " + errReason(c.Err)
	}
	if c.Err == nil {
		return "disconnected"
	}
	return "disconnected · " + errReason(c.Err)
}

// streamDown is whether the attached task's stream is not live now: it
// broke and is retrying, or failed for good. What it showed last is what
// was last seen, not what is.
func (m *Model) streamDown() bool {
	if m.mode != modeTask || !m.connSeen || m.caps.Replay {
		return false
	}
	return m.conn.Phase == sse.PhaseReconnecting || m.conn.Phase == sse.PhaseFailed
}

// placeholder is the composer's placeholder: what Enter and the hold key
// do, or, while the task's stream is down, that it is (the last state,
// "Agent is working", may be long over).
func (m *Model) placeholder() string {
	if m.streamDown() {
		c := m.conn
		if c.Phase == sse.PhaseReconnecting {
			s := "Disconnected — retrying in " + itoa(m.retryLeft(c)) + "s"
			if c.Err != nil {
				s += " (" + errReason(c.Err) + ")"
			}
			return s + "…"
		}
		if taskGone(c.Err) {
			return "Task gone — the server no longer has this task (" + errReason(c.Err) + ")"
		}
		s := "Disconnected — the stream ended and will not resume"
		if c.Err != nil {
			s += " (" + errReason(c.Err) + ")"
		}
		return s
	}
	if m.busy() {
		return "Agent is working — " + m.keyLabel("send", "enter") + " queues your message, " + m.keyLabel("hold", "ctrl+g") + " holds it…"
	}
	return "Message the agent — " + m.keyLabel("send", "enter") + " sends, " + m.keyLabel("hold", "ctrl+g") + " holds it for later…"
}

// taskGone is whether err says the server does not know the task (any
// system: a 404 answer, or a lookup that found no such session).
func taskGone(err error) bool {
	return err != nil && (errors.Is(err, client.ErrNoTask) || httpStatus(err) == http.StatusNotFound)
}

// httpStatus is the status of the server's answer err carries, 0 for none
// (the server was not reached).
func httpStatus(err error) int {
	var se *sse.StatusError
	var he *client.HTTPError
	switch {
	case errors.As(err, &se):
		return se.Status
	case errors.As(err, &he):
		return he.Status
	}
	return 0
}

// errReason is what an error says to a person, on one line
// (client.Reason).
func errReason(err error) string { return oneLine(client.Reason(err)) }

// statusLine is the task view's status bar: connection, run state with
// elapsed time, name, model, context and token totals, cwd.
func (m *Model) statusLine() string {
	meta := m.tl.Meta()
	var run string
	switch m.tl.Status() {
	case events.RunGenerating:
		if m.streamDown() {
			// The stream is down mid-run (retrying, or failed for good):
			// the connection segment says why; the run state is only what
			// was last seen.
			run = m.ch.Dim.Render("? last seen generating")
			break
		}
		if m.task.Status == events.StatusWaiting {
			// A local CLI says it waits for the user (a permission
			// prompt, a question): the run is not over, and it needs you.
			run = m.ch.Warn.Render("◆ waiting: " + oneLine(orString(m.task.WaitingFor, "your answer")))
			break
		}
		// Where the source cannot tell working from waiting (Codex's
		// files), the task's detail says the union, never a guess.
		run = spinnerFrame(m.spin.frame) + " " + oneLine(orString(m.task.Detail, "generating"))
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
		// How the last run ended, in the board's words and marks.
		switch meta.RunEnd {
		case events.RunEndFailed:
			run = m.ch.Err.Render(styles.IconFailed + " failed")
		case events.RunEndCancelled:
			run = m.ch.Dim.Render(styles.IconCancelled + " cancelled")
		default:
			run = m.ch.OK.Render("✓ idle")
		}
	}
	model := oneLine(orString(meta.Model, m.task.Model))
	var ctx string
	if meta.ContextTokens > 0 {
		ctx = "ctx " + tokens(meta.ContextTokens)
	}
	// The last run's tokens and cost, as the board and perch tasks --all
	// count them (events.RunSummary.Tokens), then the whole session's.
	runTok, sessTok := usageText("run", meta.Run, true), usageText("session", meta.Totals, false)
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
		{Text: styled(m.ch.Dim, runTok), Prio: 6},
		{Text: styled(m.ch.Dim, sessTok), Prio: 2},
		{Text: styled(m.ch.Dim, truncLeft(shortPath(oneLine(m.task.Cwd), m.cfg.Home), max(m.w/4, 10))), Prio: 5},
	}
	return layoutSegments(segs, m.ch.Faint.Render(" · "), m.w)
}

// usageText is usage labelled with its scope: "run 9.3k tok $0.04" (one
// total, the board's) or "session ↑9.2k ↓90 $0.31"; "" for none. Cost
// only where the source reports it.
func usageText(scope string, u events.Usage, total bool) string {
	if u.InputTokens+u.OutputTokens+u.TotalTokens <= 0 {
		return ""
	}
	s := scope + " ↑" + tokens(u.InputTokens) + " ↓" + tokens(u.OutputTokens)
	if total {
		s = scope + " " + tokens(events.RunSummary{Usage: u}.Tokens()) + " tok"
	}
	if u.HasCost && u.CostUSD > 0 {
		s += " " + events.CostText(u.CostUSD)
	}
	return s
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
		rest := " queued messages come back as held messages  " + m.ch.Key.Render(m.keyLabel("yes", "y")) + " yes · " + m.ch.Key.Render(m.keyLabel("no", "n")) + " no"
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

// keyHints are the keys of the current mode and focus, in the order shown,
// each named as the user bound it (keyLabel).
func (m *Model) keyHints() []chrome.Hint {
	kl := m.keyLabel
	if m.overlay == ovHelp {
		if len(m.helpAll()) <= m.helpHeight() {
			return []chrome.Hint{vital("esc", "close help")}
		}
		return []chrome.Hint{major("↑/↓ pgup/pgdn", "scroll"), vital("esc", "close help")}
	}
	if m.overlay == ovFind {
		return m.findHints()
	}
	if m.mode == modeList && m.board != nil {
		return m.boardHints()
	}
	if m.mode == modeList {
		return m.listHints()
	}
	if m.focus == focusHeld {
		pause := "pause"
		if m.held.paused() {
			pause = "resume"
		}
		return []chrome.Hint{major(kl("held_edit", "e"), "edit"), major(kl("held_delete", "d"), "delete"),
			minor(m.keyPair("held_move_down", "held_move_up", "J/K"), "move"), minor(kl("held_to_composer", "c"), "to composer"),
			major(kl("held_release", "s"), "send now"), minor(kl("held_pause", "p"), pause), vital(kl("held_back", "esc"), "composer"),
			vital(m.helpKeyLabel(), "keys")}
	}
	if m.focus == focusComposer {
		if m.held.editing != "" {
			return []chrome.Hint{major(kl("send", "enter"), "save"), vital("esc", "cancel the edit"), minor(kl("newline", "shift+enter"), "newline"),
				vital(m.helpKeyLabel(), "keys")}
		}
		send := "send"
		switch {
		case m.streamDown():
			// Written down, sent once the server answers (the rule says
			// so); a run last seen may be long over: nothing to cancel.
			send = "keep"
		case m.busy():
			send = "queue"
		}
		hs := []chrome.Hint{major(kl("send", "enter"), send), major(kl("hold", "ctrl+g"), "hold"), minor(kl("newline", "shift+enter"), "newline")}
		if len(m.held.pending()) > 0 {
			hs = append(hs, major(kl("to_held", "shift+tab"), "held"))
		}
		if m.busy() && m.caps.Cancel && !m.streamDown() {
			hs = append(hs, major(kl("cancel_run", "ctrl+x"), "cancel run"))
		}
		hs = append(hs, minor(kl("history", "↑"), "history"), minor(kl("editor", "ctrl+o"), "editor"))
		if m.caps.WebSearch {
			hs = append(hs, minor(kl("web_search_toggle", "ctrl+s"), "web"))
		}
		return append(hs, vital(kl("leave", "tab/esc"), "transcript"), vital(m.helpKeyLabel(), "keys"))
	}
	var hs []chrome.Hint
	if m.caps.Send {
		hs = append(hs, major(kl("compose", "tab"), "write"))
	}
	hs = append(hs, minor(m.keyPair("down", "up", "j/k"), "scroll"), major(m.keyPair("prev_item", "next_item", "[/]"), "select"),
		major(kl("expand", "enter"), "expand"), major(kl("search", "/"), "search"))
	if m.caps.Send && len(m.held.pending()) > 0 {
		hs = append(hs, major(kl("held", "H"), "held"))
	}
	if m.search.query != "" {
		hs = append(hs, major(m.keyPair("next_match", "prev_match", "n/N"), "next/prev"))
	}
	return append(hs, minor(kl("copy", "y"), "copy"), minor(kl("todos", "t"), "todos"), vital(kl("back", "esc"), "tasks"), vital(kl("help", "?"), "keys"))
}

// styled renders s, or nothing at all when s is empty (an empty styled
// string still carries escape codes, which would make a segment "present").
func styled(st lipgloss.Style, s string) string { return chrome.Styled(st, s) }
