package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/tui/chrome"
)

// itemSource adapts the timeline and renderer to the transcript's lazy
// list. It is refreshed (items, width) before every transcript operation.
type itemSource struct {
	m     *Model
	tl    reducer
	width int
}

func (s *itemSource) count() int { return s.tl.Len() }

// item is item i, read back when the timeline froze it (events.Freeze).
func (s *itemSource) item(i int) *events.Item { return s.tl.At(i) }

func (s *itemSource) opts(i int) itemOpts {
	it := s.item(i)
	o := itemOpts{Width: s.width, Expanded: s.m.expanded[it], Selected: i == s.m.tr.sel, HideThinking: s.m.hideThinking}
	// Only running tools get the spinner frame: passing it to every item
	// would change every cache key on every tick.
	if it.Kind == events.ItemTool && it.Tool != nil && it.Tool.Status == events.ToolRunning {
		o.Spinner = s.m.liveSpinner(s.m.streamDown())
	}
	return o
}

// source returns the transcript's list source, synced with the timeline.
func (m *Model) source() *itemSource {
	m.src.tl = m.tl
	m.src.width = max(m.w, 1)
	return m.src
}

// taskLayout is the height of every band of the task view, top to bottom.
// Bands are dropped as the terminal shrinks, least important first, so the
// view degrades instead of breaking (never below zero rows).
type taskLayout struct {
	todos, transcript, queue, held, banner, rule, composer, status, hints int
}

func (m *Model) layout() taskLayout {
	var l taskLayout
	rest := m.h
	take := func(want, minH int) int {
		if rest < want || m.h < minH {
			return 0
		}
		rest -= want
		return want
	}
	l.status = take(1, 1)
	if m.caps.Send {
		l.composer = take(m.comp.height(m.composerMaxHeight()), 2)
		if l.composer == 0 && rest >= 1 && m.h >= 2 {
			l.composer = take(1, 2)
		}
	}
	l.rule = take(1, 4)
	l.hints = take(1, 8)
	if m.h >= 12 && m.cfg.Banner != "" {
		l.banner = take(len(m.bannerLines()), 12)
	}
	if m.h >= 10 {
		if n := m.heldRows(); n > 0 {
			l.held = take(min(n, max(m.h/3, 2)), 10)
		}
		if q := m.queueLines(); len(q) > 0 {
			l.queue = take(min(len(q), max(m.h/3-l.held/2, 2)), 10)
		}
	}
	if m.todosOpen && m.h >= 14 {
		if n := m.todoHeight(); n > 0 {
			l.todos = take(min(n, max(m.h/4, 3)), 14)
		}
	}
	l.transcript = max(rest, 0)
	return l
}

func (m *Model) composerMaxHeight() int {
	switch {
	case m.h >= 30:
		return 8
	case m.h >= 16:
		return 5
	case m.h >= 10:
		return 3
	}
	return 1
}

// transcriptHeight is the number of rows the transcript gets now.
func (m *Model) transcriptHeight() int { return m.layout().transcript }

// taskView assembles the attach screen.
func (m *Model) taskView() ([]string, *tea.Cursor) {
	l := m.layout()
	out := make([]string, 0, m.h)
	if l.todos > 0 {
		out = append(out, m.todoLines(l.todos)...)
	}
	if m.overlay == ovHelp {
		// The help takes every row but the status bar.
		out = m.helpLines(m.helpHeight())
		if l.status > 0 {
			out = append(out, m.statusLine())
		}
		if l.hints > 0 {
			line, _ := m.hintsLine()
			out = append(out, line)
		}
		return out, nil
	}
	out = append(out, m.transcriptLines(l.transcript)...)
	m.trY, m.trH = l.todos, l.transcript
	if l.queue > 0 {
		q := m.queueLines()
		if len(q) > l.queue {
			// Keep the header and the first entries; the last row says how
			// many more there are.
			more := len(q) - l.queue + 1
			q = append(q[:l.queue-1:l.queue-1], m.ch.Dim.Render(fit("  … "+itoa(more)+" more ("+m.keyLabel("queue_toggle", "ctrl+q")+")", m.w)))
		}
		out = append(out, q...)
	}
	if l.held > 0 {
		out = append(out, m.heldLines(l.held)...)
	}
	if l.banner > 0 {
		out = append(out, m.bannerLines()...)
	}
	if l.rule > 0 {
		var k keyb
		k.t(m.focus == focusComposer).t(m.busy()).t(m.comp.web).t(m.caps.WebSearch).t(m.caps.Send).s(m.caps.Note).i(m.w).s(m.held.editing).
			t(m.streamDown()).t(m.streamDown() && taskGone(m.conn.Err))
		out = append(out, m.memoRule.get(k.String(), m.composerRule))
	}
	var cur *tea.Cursor
	if l.composer > 0 {
		top := len(out)
		out = append(out, m.composerLines(l.composer)...)
		if m.focus == focusComposer && m.overlay == ovNone {
			if c := m.comp.cursor(); c != nil && c.Y < l.composer {
				c.Y += top
				cur = c
			}
		}
	}
	if l.status > 0 {
		out = append(out, m.statusLineMemo())
	}
	if l.hints > 0 {
		line, c := m.hintsLineMemo()
		if c != nil {
			c.Y = len(out)
			cur = c
		}
		out = append(out, line)
	} else if m.overlay == ovConfirmCancel || m.overlay == ovSearch {
		// No hints row: the question must still be seen, so it takes the
		// status row.
		line, c := m.hintsLine()
		if len(out) > 0 {
			out[len(out)-1] = line
			if c != nil {
				c.Y = len(out) - 1
				cur = c
			}
		}
	}
	for len(out) < m.h {
		out = append(out, "")
	}
	return out[:m.h], cur
}

// transcriptLines draws the visible part of the transcript, h rows.
func (m *Model) transcriptLines(h int) []string {
	if h <= 0 {
		return nil
	}
	src := m.source()
	if src.count() == 0 {
		return m.emptyTranscript(h)
	}
	m.tr.clamp(src, h)
	m.rows, m.owners = m.tr.visible(src, h, m.rows, m.owners)
	// A short transcript sits on the composer, as in a chat: pad on top.
	pad := 0
	if m.tr.follow && len(m.rows) < h {
		pad = h - len(m.rows)
		m.owners = append(m.owners, make([]int, pad)...)
		copy(m.owners[pad:], m.owners[:len(m.owners)-pad])
		for i := 0; i < pad; i++ {
			m.owners[i] = -1
		}
	}
	out := make([]string, h)
	q := m.search.active()
	for i, r := range m.rows {
		if q != "" {
			r = m.rend.Highlight(r, q)
		}
		out[pad+i] = r
	}
	// Overlay the position hint on the last row when not following.
	if n := m.tr.newCount(src); !m.tr.follow {
		hint := " ↑ scrolled · G bottom "
		if n > 0 {
			hint = " ↓ " + itoa(n) + " new · G to follow "
		}
		out[h-1] = spread("", m.ch.BadgeOn.Render(strings.TrimSpace(hint)), m.w)
	}
	return out
}

func (m *Model) emptyTranscript(h int) []string {
	out := make([]string, h)
	msg := "waiting for events…"
	switch {
	case m.streamErr != nil:
		msg = "stream ended: " + oneLine(m.streamErr.Error())
	case m.tl.Status() == events.RunStopped:
		msg = "this task is stopped; sending a message resumes it"
	case m.connSeen && m.conn.Phase == sse.PhaseLive: // nothing replayed yet
		msg = "no messages yet — type below and press enter"
	}
	// Wrapped, not cut: an error's reason is at its end.
	msgs := chrome.WrapLines(msg, m.w-4)
	for i, l := range msgs {
		if r := h/2 - len(msgs)/2 + i; r >= 0 && r < h {
			out[r] = centre(m.ch.Dim.Render(l), m.w)
		}
	}
	return out
}

// centre pads s on the left to centre it in w cells.
func centre(s string, w int) string { return chrome.Centre(s, w) }

// composerLines memoizes the textarea's view: it is the most expensive
// piece of chrome, and unchanged by everything but typing and resizing.
func (m *Model) composerLines(h int) []string {
	ta := &m.comp.ta
	ta.Placeholder = m.placeholder() // the state it tells may change with time
	var k keyb
	k.s(ta.Value()).i(ta.Line()).i(ta.Column()).i(ta.ScrollYOffset()).i(m.w).i(h).
		t(ta.Focused()).s(ta.Placeholder).i(int(m.theme))
	joined := m.memoComp.get(k.String(), func() string { return strings.Join(m.comp.lines(h), "\n") })
	return strings.Split(joined, "\n")
}

// statusLineMemo re-renders the status bar only when something it shows
// changed (the spinner frame and elapsed seconds included).
func (m *Model) statusLineMemo() string {
	meta := m.tl.Meta()
	var k keyb
	c := m.conn
	left := int64(0)
	if c.Phase == sse.PhaseReconnecting {
		left = int64((c.RetryIn - m.now.Sub(c.Since)) / time.Second)
	}
	errS := ""
	if c.Err != nil {
		errS = c.Err.Error()
	}
	k.i(m.w).t(m.connSeen).i(int(c.Phase)).i(c.Attempt).i64(left).s(errS).
		i(int(m.tl.Status())).i(m.spin.frame).t(m.canceling).t(m.streamGone()).
		i64(int64(m.now.Sub(meta.RunStarted) / time.Second)).s(meta.Model).s(m.task.Model).
		i64(meta.ContextTokens).i64(meta.Totals.InputTokens).i64(meta.Totals.OutputTokens).
		i64(meta.Run.InputTokens).i64(meta.Run.OutputTokens).i64(meta.Run.TotalTokens).s(events.CostText(meta.Run.CostUSD)).s(events.CostText(meta.Totals.CostUSD)).
		s(m.task.Name).s(m.task.ID).s(m.task.Cwd)
	return m.memoStatus.get(k.String(), m.statusLine)
}

// hintsLineMemo memoizes the hints row (inputs with a cursor are cheap
// and not memoized).
func (m *Model) hintsLineMemo() (string, *tea.Cursor) {
	if m.overlay == ovSearch {
		return m.hintsLine()
	}
	var k keyb
	k.i(m.w).i(int(m.overlay)).i(int(m.mode)).i(int(m.focus)).t(m.busy()).
		t(m.search.query != "").s(m.flash.text).t(m.flash.err).s(m.held.editing).
		t(len(m.held.pending()) > 0).t(m.held.paused()).
		t(m.caps.Send).t(m.caps.Cancel).t(m.caps.Create).t(m.caps.WebSearch).t(m.streamDown())
	line := m.memoHints.get(k.String(), func() string { l, _ := m.hintsLine(); return l })
	return line, nil
}
