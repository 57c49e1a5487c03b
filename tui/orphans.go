package tui

import (
	"slices"

	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/outbox"
)

// Orphans are perch's messages whose session is gone. They are never
// delivered by themselves (outbox.Deliverer refuses them); the held panel
// of any session lists them so the user can move one to the session on
// screen (m), take it back into the composer (c, e) or delete it (d).
//
// Two kinds: a message of the attached task's own queue written for an
// earlier session that had the same id (a daemon that restarted and gave
// the id again), and an orphan of another task id's queue (a stray): one
// the task list does not have any more, or one another session has now.

// stray is an orphan kept in another task id's queue.
type stray struct {
	task string
	msg  outbox.Message
}

// straysMsg: the messages of gone sessions, read by loadStraysCmd.
type straysMsg struct {
	gen    uint64
	strays []stray
}

// strayDoneMsg: a stray was moved here (opAdopt), taken into the
// composer (opToComposer) or deleted (opDrop).
type strayDoneMsg struct {
	gen uint64
	op  outboxOp
	s   stray
	err error
}

// isOrphan reports whether a message of the attached task's queue is an
// orphan: marked so by a delivery attempt, or written for a session other
// than the one that has the id now (the Deliverer would mark it before
// sending anything).
func (m *Model) isOrphan(msg outbox.Message) bool {
	return outbox.IsOrphan(msg, m.task, true)
}

// loadStraysCmd finds the orphans of other queues than the attached
// task's: those of sessions the list does not have any more, and those
// of listed ids that another session has now (outbox.TakeCensus). Only
// once a list answered: before that a missing id is one not known yet,
// not one that is gone.
func (m *Model) loadStraysCmd() tea.Cmd {
	if _, ok := m.ob.store.(outbox.Lister); !ok || !m.list.answered || m.held.taskID == "" {
		return nil
	}
	store, gen, cur, tasks := m.ob.store, m.gen, m.held.taskID, slices.Clone(m.list.tasks)
	return func() tea.Msg {
		c, err := outbox.TakeCensus(store, tasks)
		if err != nil {
			return nil
		}
		var out []stray
		for _, o := range c.Orphans {
			if o.Task != cur && o.Message.State != outbox.Sending {
				out = append(out, stray{task: o.Task, msg: o.Message})
			}
		}
		return straysMsg{gen: gen, strays: out}
	}
}

// selectedStray is the stray under the panel's selection (they follow
// the attached task's own messages).
func (m *Model) selectedStray() (stray, bool) {
	i := m.held.sel - len(m.held.pending())
	if i < 0 || i >= len(m.held.strays) {
		return stray{}, false
	}
	return m.held.strays[i], true
}

// adoptHeld moves the selected orphan to the session on screen, where it
// is held like a message written here.
func (m *Model) adoptHeld() tea.Cmd {
	if s, ok := m.selectedStray(); ok {
		return m.strayCmd(opAdopt, s)
	}
	msg, ok := m.selectedHeld()
	if !ok {
		return nil
	}
	if !m.isOrphan(msg) {
		m.setFlash(m.keyLabel("held_adopt", "m")+" moves an orphan (a message whose session is gone) here; "+msg.ID+" is already this session's", false)
		return nil
	}
	ob, gen, taskID, now, stamp := m.ob, m.gen, m.held.taskID, m.now, m.stamp(m.held.taskID)
	return func() tea.Msg {
		moved, err := outbox.MoveTo(ob.store, taskID, msg.ID, ob.store, taskID, stamp, now)
		q, seq, _ := ob.load(taskID)
		return outboxMsg{gen: gen, taskID: taskID, op: opAdopt, q: q, seq: seq, msg: moved, text: msg.Text, err: err}
	}
}

// strayCmd runs op on a stray: move it to the attached task, or take it
// out of its queue (into the composer, or deleted).
func (m *Model) strayCmd(op outboxOp, s stray) tea.Cmd {
	ob, gen, taskID, now, stamp, ctx := m.ob, m.gen, m.held.taskID, m.now, m.stamp(m.held.taskID), m.ctx
	return func() tea.Msg {
		var err error
		if op == opAdopt {
			_, err = outbox.MoveTo(ob.store, s.task, s.msg.ID, ob.store, taskID, stamp, now)
		} else {
			_, err = ob.d.Drop(ctx, s.task, s.msg.ID)
		}
		return strayDoneMsg{gen: gen, op: op, s: s, err: err}
	}
}

func (m *Model) handleStrays(msg straysMsg) tea.Cmd {
	if msg.gen != m.gen || m.mode != modeTask {
		return nil
	}
	h := &m.held
	h.strays = msg.strays
	h.sel = min(h.sel, max(len(h.msgs)+len(h.strays)-1, 0))
	if m.focus == focusHeld && len(h.msgs)+len(h.strays) == 0 {
		return m.focusComposer()
	}
	return nil
}

func (m *Model) handleStrayDone(msg strayDoneMsg) tea.Cmd {
	if msg.gen != m.gen {
		return nil
	}
	id := msg.s.msg.ID
	if msg.err != nil {
		m.setFlash("could not take "+id+" of session "+shortID(msg.s.task)+": "+msg.err.Error(), true)
		return m.loadStraysCmd()
	}
	m.held.strays = slices.DeleteFunc(m.held.strays, func(s stray) bool { return s.task == msg.s.task && s.msg.ID == id })
	cmds := []tea.Cmd{m.loadStraysCmd()}
	switch msg.op {
	case opAdopt:
		m.setFlash("moved "+id+" here — it is held for this session", false)
		cmds = append(cmds, m.loadHeldCmd(m.held.taskID))
	case opToComposer:
		m.comp.setValue(joinDraft([]string{msg.s.msg.Text}, m.comp.value()))
		m.setFlash("message "+id+" moved to the composer", false)
		cmds = append(cmds, m.focusComposer())
	case opDrop:
		m.comp.pushHistory(msg.s.msg.Text)
		m.setFlash("deleted "+id+" — "+m.keyLabel("history", "↑")+" in an empty composer brings its text back", false)
	}
	return tea.Batch(cmds...)
}

// orphanRefusal is what s (send now) says of an orphan.
func (m *Model) orphanRefusal(id string) string {
	return id + " is an orphan: its session is gone — " + m.keyLabel("held_adopt", "m") + " moves it to this session, " +
		m.keyLabel("held_to_composer", "c") + " takes it into the composer"
}
