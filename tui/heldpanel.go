package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/styles"
)

// heldLines is the held panel, right above the composer and apart from
// the daemon's queue: perch's own messages for the task (held, being
// delivered, kept after a failure with the reason), at most maxH rows,
// scrolled so that the selected message shows.
func (m *Model) heldLines(maxH int) []string {
	h := &m.held
	if m.mode != modeTask || h.count() == 0 || maxH <= 0 {
		return nil
	}
	w := m.w
	focused := m.focus == focusHeld
	pending := h.pending()
	var rows []string
	if len(pending)+len(h.strays) > 0 {
		rows = append(rows, m.heldHeader(pending, focused))
	}
	type block struct{ lines []string }
	var blocks []block
	spin := ""
	if h.inflight > 0 {
		spin = spinnerFrame(m.spin.frame) + " "
	}
	for i, msg := range pending {
		num := itoa(i+1) + ". "
		gutter := "    "
		sel := focused && i == h.sel
		if sel {
			gutter = "  › "
		}
		id := m.ch.Dim.Render("[" + msg.ID + "] ")
		var state string
		switch msg.State {
		case outbox.Sending:
			state = m.ch.Dim.Render(spin + "sending ")
		case outbox.Failed:
			state = m.ch.Err.Render("✗ refused ")
		case outbox.Orphaned:
			state = m.ch.Err.Render(styles.IconOrphan + " orphan ")
		default:
			if msg.Intent == outbox.IntentSend {
				// Sent by the user, kept: it goes as soon as it can.
				state = m.ch.Warn.Render("↻ ")
				if h.inflight > 0 {
					state = m.ch.Dim.Render(spin + "sending ")
				}
			}
		}
		if msg.State != outbox.Orphaned && m.isOrphan(msg) {
			state = m.ch.Err.Render(styles.IconOrphan + " orphan ")
		}
		if msg.ID == h.editing {
			state = m.ch.Accent.Render("(editing) ") + state
		}
		text := oneLine(msg.Text)
		if sel {
			text = m.ch.Selected.Render(text)
		}
		if msg.WebSearch {
			text += m.ch.Dim.Render(" [web]")
		}
		b := block{lines: []string{truncate(gutter+num+id+state+text, w)}}
		if e := heldReason(msg); e != "" {
			b.lines = append(b.lines, truncate(m.ch.Err.Render(strings.Repeat(" ", len(gutter)+len(num))+"✗ "+oneLine(e)), w))
		}
		blocks = append(blocks, b)
	}
	for i, st := range h.strays {
		i += len(pending)
		gutter := "    "
		if focused && i == h.sel {
			gutter = "  › "
		}
		text := oneLine(st.msg.Text)
		if focused && i == h.sel {
			text = m.ch.Selected.Render(text)
		}
		state := m.ch.Err.Render(styles.IconOrphan + " orphan of session " + shortID(st.task) + " ")
		blocks = append(blocks, block{lines: []string{truncate(gutter+itoa(i+1)+". "+m.ch.Dim.Render("["+st.msg.ID+"] ")+state+text, w)}})
	}
	for _, l := range h.local {
		what := "sending "
		if l.intent == outbox.IntentHold {
			what = "holding "
		}
		blocks = append(blocks, block{lines: []string{truncate(m.ch.Dim.Render("  "+spinnerFrame(m.spin.frame)+" "+what)+oneLine(l.text), w)}})
	}
	// Scroll: the selected block and its neighbours stay in view.
	room := maxH - len(rows)
	if room <= 0 {
		return rows[:maxH]
	}
	total := 0
	for _, b := range blocks {
		total += len(b.lines)
	}
	first := 0
	if total > room {
		room-- // the "… more" row
		if focused {
			// Start as late as needed for the selection to fit.
			need := 0
			for i := h.sel; i >= 0 && i < len(blocks); i-- {
				if need+len(blocks[i].lines) > room {
					break
				}
				need += len(blocks[i].lines)
				first = i
			}
		}
	}
	used := 0
	shown := 0
	for i := first; i < len(blocks); i++ {
		if used+len(blocks[i].lines) > room {
			break
		}
		rows = append(rows, blocks[i].lines...)
		used += len(blocks[i].lines)
		shown++
	}
	if more := len(blocks) - shown; more > 0 && len(rows) < maxH {
		hint := "  … " + itoa(more) + " more"
		if !focused {
			hint += " (" + m.keyLabel("to_held", "shift+tab") + ")"
		}
		rows = append(rows, m.ch.Dim.Render(fit(hint, w)))
	}
	if len(rows) > maxH {
		rows = rows[:maxH]
	}
	return rows
}

// heldHeader is the panel's first row: what it holds and what happens to
// it.
func (m *Model) heldHeader(pending []outbox.Message, focused bool) string {
	// What they wait for is the delivery rule's word (outbox.Pace).
	note := m.held.note()
	running := note == outbox.NoteRun || note == outbox.NoteRunStarts
	nHeld, nSend, nWait, nOrphan := 0, 0, 0, len(m.held.strays)
	for _, msg := range pending {
		if m.isOrphan(msg) {
			nOrphan++
		} else if msg.Waiting && msg.State == outbox.Held && running {
			// Sent to a running session whose server keeps no queue.
			nWait++
		} else if msg.Intent == outbox.IntentSend && msg.State != outbox.Failed {
			nSend++
		} else {
			nHeld++
		}
	}
	var parts []string
	if nHeld > 0 {
		parts = append(parts, itoa(nHeld)+" held")
	}
	if nSend > 0 {
		parts = append(parts, itoa(nSend)+" sent, not delivered yet")
	}
	if nWait > 0 {
		parts = append(parts, itoa(nWait)+" waiting for the run to end")
	}
	if nOrphan > 0 {
		parts = append(parts, itoa(nOrphan)+" orphaned (their session is gone: m moves one here, c takes it back)")
	}
	what := strings.Join(parts, ", ")
	var head string
	switch note {
	case outbox.NotePaused:
		head = m.ch.Warn.Render("  ⏸ " + what)
	case outbox.NoteServer:
		head = m.ch.Warn.Render("  ✎ " + what)
	default:
		head = m.ch.Accent.Render("  ✎ " + what)
	}
	if n := m.heldNoteText(note); n != "" {
		head += m.ch.Hint.Render(" · " + n)
	}
	if !focused && m.caps.Send {
		head += m.ch.Hint.Render(" · shift+tab to edit")
	}
	return truncate(head, m.w)
}

// heldNoteText is what the header says the pending messages wait for:
// the delivery rule's word (outbox.Pace's Note), with the key that
// resumes a pause and when the server is tried again.
func (m *Model) heldNoteText(note outbox.Note) string {
	switch {
	case note == outbox.NotePaused:
		where := ""
		if m.focus != focusHeld {
			where = " in the held panel"
		}
		return note.String() + " — " + m.keys.HeldPause.Help().Key + where + " resumes"
	case note == outbox.NoteServer && m.conn.Phase == sse.PhaseReconnecting:
		return note.String() + " (retrying in " + itoa(m.retryLeft(m.conn)) + "s)"
	}
	return note.String()
}

// heldRows is how many rows the panel wants.
func (m *Model) heldRows() int {
	h := &m.held
	if m.mode != modeTask || h.count() == 0 {
		return 0
	}
	n := len(h.local) + len(h.strays)
	if len(h.pending())+len(h.strays) > 0 {
		n++ // the header
	}
	for _, msg := range h.pending() {
		n++
		if heldReason(msg) != "" {
			n++
		}
	}
	return n
}

// heldReason is why a message is still here, if something went wrong.
func heldReason(msg outbox.Message) string {
	switch msg.State {
	case outbox.Sending:
		if msg.Err != "" {
			return "not confirmed by the daemon: " + msg.Err
		}
		return ""
	case outbox.Failed, outbox.Orphaned:
		return msg.Err
	}
	if msg.Err != "" {
		return "not delivered: " + msg.Err
	}
	return ""
}

// focusHeldPanel moves the keys to the held panel.
func (m *Model) focusHeldPanel() tea.Cmd {
	if m.mode != modeTask || !m.caps.Send {
		return nil
	}
	if m.held.editing != "" {
		m.setFlash("finish the edit first — enter saves, esc cancels", false)
		return m.focusComposer()
	}
	n := len(m.held.pending()) + len(m.held.strays)
	if n == 0 {
		m.setFlash("no held messages — "+m.keyLabel("hold", "ctrl+g")+" in the composer holds one", false)
		return nil
	}
	m.focus = focusHeld
	m.comp.blur()
	if m.held.sel >= n {
		m.held.sel = n - 1
	}
	return nil
}

// heldKey handles keys while the held panel has focus.
func (m *Model) heldKey(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	n := len(m.held.pending()) + len(m.held.strays)
	switch {
	case msg.String() == "f1" || key.Matches(msg, k.Help):
		m.overlay = ovHelp
	case key.Matches(msg, k.HeldBack):
		return m.focusComposer()
	case key.Matches(msg, k.HeldMoveUp):
		return m.moveHeld(-1)
	case key.Matches(msg, k.HeldMoveDown):
		return m.moveHeld(+1)
	case key.Matches(msg, k.HeldUp):
		m.held.sel = max(m.held.sel-1, 0)
	case key.Matches(msg, k.HeldDown):
		m.held.sel = min(m.held.sel+1, max(n-1, 0))
	case key.Matches(msg, k.HeldEdit):
		if _, ok := m.selectedStray(); ok {
			return m.dropHeld(opToComposer) // a gone session's message is taken back, not edited in place
		}
		return m.startEdit()
	case key.Matches(msg, k.HeldAdopt):
		return m.adoptHeld()
	case key.Matches(msg, k.HeldDelete):
		return m.dropHeld(opDrop)
	case key.Matches(msg, k.HeldToComposer):
		return m.dropHeld(opToComposer)
	case key.Matches(msg, k.HeldRelease):
		return m.releaseHeld()
	case key.Matches(msg, k.HeldPause):
		return m.togglePause()
	case key.Matches(msg, k.CancelRun):
		m.askCancel()
	case key.Matches(msg, k.Retry):
		return m.retryHeld()
	case typed(msg):
		// A letter no action of the panel has: never typed into the
		// draft behind it (the panel has the keys), but said.
		m.setFlash(sanitizeKey(msg.String())+" does nothing in the held list — "+m.keyLabel("held_edit", "e")+" edits, "+
			m.keyLabel("held_back", "esc")+" goes back to the composer to write", false)
	}
	return nil
}

// sanitizeKey is a key's name as a flash shows it.
func sanitizeKey(s string) string { return oneLine(s) }
