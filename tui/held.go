package tui

import (
	"context"
	"errors"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/sse"
)

// held is the attached task's outbox as the UI shows it: the last snapshot
// the commands returned, the selection and the edit in progress. When
// messages are delivered is not the UI's to decide: pace (outbox.Pace, the
// rule perch's other callers follow too) is told what the UI sees and says
// what to do; the UI runs that in commands and draws what pace says.
type held struct {
	taskID string
	q      *outbox.Queue    // last snapshot; nil until loaded
	msgs   []outbox.Message // q.Pending()
	seq    uint64
	sel    int // selected message while the panel has focus

	// editing is the id of the held message loaded into the composer;
	// stash is the composer text it replaced.
	editing, stash string

	// strays: messages of sessions that are gone (orphans.go), listed
	// after msgs.
	strays []stray

	// local: typed and submitted, not written down yet.
	local     []localMsg
	nextLocal int

	inflight   int // delivery commands running for this attach
	flushBusy  bool
	flushAgain bool

	pace     *outbox.Pace
	clock    time.Time // the latest time a pace timer fired for
	timerAt  time.Time // the pace timer in force (zero: none)
	timerSeq int
}

// localMsg is a submitted text on its way to the outbox.
type localMsg struct {
	id     int
	text   string
	intent outbox.Intent
}

// heldSettledMsg: a time pace asked to be woken at has come (seq is the
// timer's).
type heldSettledMsg struct {
	gen uint64
	seq int
	at  time.Time
}

// outboxChangedMsg: the task's outbox changed on disk (any process).
type outboxChangedMsg struct {
	gen    uint64
	taskID string
}

// outboxOp names what an outbox command did.
type outboxOp uint8

const (
	opLoad outboxOp = iota
	opAdd
	opEdit
	opMove
	opDrop
	opToComposer
	opRelease
	opPause
	opNext
	opFlush
	opRecover
	opAdopt
)

// outboxMsg is the result of every outbox command: what it did and the
// task's queue after it.
type outboxMsg struct {
	gen    uint64
	taskID string
	op     outboxOp
	q      *outbox.Queue // nil if it could not be read
	seq    uint64
	res    []outbox.Result
	msg    outbox.Message // the message the op concerned
	text   string         // the text it carried (kept if the op failed)
	texts  []string       // opRecover
	local  int            // opAdd: the local entry it wrote down
	intent outbox.Intent  // opAdd
	err    error
}

// pending is what the held panel lists: messages not delivered yet.
func (h *held) pending() []outbox.Message { return h.msgs }

func (h *held) paused() bool { return h.q != nil && h.q.Paused() }

// count is the messages the panel lists, local ones included.
func (h *held) count() int {
	return len(h.local) + len(h.msgs) + len(h.strays)
}

// note is what the panel says the pending messages wait for.
func (h *held) note() outbox.Note {
	if h.pace == nil {
		return outbox.NoteServer
	}
	return h.pace.Note(h.q)
}

// event tells pace one event of the attached task, with the status after
// it (pace finds there the run a delivered message started).
func (h *held) event(ev events.Event, status events.RunStatus) {
	if h.pace != nil {
		h.pace.Event(ev, status)
	}
}

// waitingSend: a message the user sent is waiting (the daemon was down).
func (h *held) waitingSend() bool {
	if h.q == nil {
		return false
	}
	_, ok := h.q.Next(outbox.Busy)
	return ok
}

// resetHeld starts the held state of a freshly attached task.
func (m *Model) resetHeld(taskID string) {
	m.held = held{taskID: taskID, pace: m.ob.pace()}
	if taskID != "" {
		m.ob.touched[taskID] = true
	}
}

// ---- commands (all the IO) ----

func (m *Model) loadHeldCmd(taskID string) tea.Cmd {
	ob, gen := m.ob, m.gen
	return func() tea.Msg {
		q, seq, err := ob.load(taskID)
		return outboxMsg{gen: gen, taskID: taskID, op: opLoad, q: q, seq: seq, err: err}
	}
}

// addCmd writes a message down; a sent one is then delivered with every
// other sent message waiting before it.
func (m *Model) addCmd(l localMsg, web bool) tea.Cmd {
	ob, gen, taskID, now, parent := m.ob, m.gen, m.held.taskID, m.now, m.ctx
	stamp := m.stamp(taskID)
	return func() tea.Msg {
		var added outbox.Message
		q, seq, err := ob.update(taskID, func(q *outbox.Queue) error {
			var err error
			added, err = q.AddFor(stamp, l.text, l.intent, web, now)
			return err
		})
		out := outboxMsg{gen: gen, taskID: taskID, op: opAdd, q: q, seq: seq, msg: added,
			text: l.text, local: l.id, intent: l.intent, err: err}
		if err != nil || l.intent != outbox.IntentSend {
			return out
		}
		ctx, cancel := context.WithTimeout(parent, deliverTimeout)
		defer cancel()
		out.res, out.err = ob.d.Flush(ctx, taskID)
		if q, seq, lerr := ob.load(taskID); lerr == nil {
			out.q, out.seq = q, seq
		}
		for _, r := range out.res {
			if r.Message.ID == added.ID {
				out.msg = r.Message
			}
		}
		return out
	}
}

// changeCmd runs a change to the queue (edit, move, pause).
func (m *Model) changeCmd(op outboxOp, id, text string, fn func(*outbox.Queue) error) tea.Cmd {
	ob, gen, taskID := m.ob, m.gen, m.held.taskID
	return func() tea.Msg {
		q, seq, err := ob.update(taskID, fn)
		return outboxMsg{gen: gen, taskID: taskID, op: op, q: q, seq: seq, msg: outbox.Message{ID: id}, text: text, err: err}
	}
}

// dropCmd deletes a message (op opDrop) or takes it back into the composer
// (opToComposer).
func (m *Model) dropCmd(op outboxOp, id string) tea.Cmd {
	ob, gen, taskID, ctx := m.ob, m.gen, m.held.taskID, m.ctx
	return func() tea.Msg {
		dm, err := ob.d.Drop(ctx, taskID, id)
		q, seq, _ := ob.load(taskID)
		return outboxMsg{gen: gen, taskID: taskID, op: op, q: q, seq: seq, msg: dm, text: dm.Text, err: err}
	}
}

// deliverCmd runs one delivery: Next(Idle), Flush or Release(id).
func (m *Model) deliverCmd(op outboxOp, taskID, id string) tea.Cmd {
	ob, gen, parent := m.ob, m.gen, m.ctx
	if taskID == m.held.taskID {
		m.noteDelivering()
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(parent, deliverTimeout)
		defer cancel()
		out := outboxMsg{gen: gen, taskID: taskID, op: op, msg: outbox.Message{ID: id}}
		switch op {
		case opNext:
			r, err := ob.d.Next(ctx, taskID, outbox.Idle)
			out.err = err
			if r.Message.ID != "" {
				out.res, out.msg = []outbox.Result{r}, r.Message
			}
		case opFlush:
			out.res, out.err = ob.d.Flush(ctx, taskID)
		case opRelease:
			r, err := ob.d.Release(ctx, taskID, id)
			out.err = err
			if r.Message.ID != "" {
				out.res, out.msg = []outbox.Result{r}, r.Message
			}
		}
		out.q, out.seq, _ = ob.load(taskID)
		return out
	}
}

// recoverCmd puts what a cancel handed back at the front of the queue.
func (m *Model) recoverCmd(gen uint64, taskID string, texts []string) tea.Cmd {
	ob, now, stamp := m.ob, m.now, m.stamp(taskID)
	return func() tea.Msg {
		q, seq, err := ob.update(taskID, func(q *outbox.Queue) error {
			_, err := q.RecoverFromCancelFor(stamp, texts, now)
			return err
		})
		return outboxMsg{gen: gen, taskID: taskID, op: opRecover, q: q, seq: seq, texts: texts, err: err}
	}
}

// stamp is the session a new message for taskID is written for: the
// attached task as the backend reported it ("" if it did not say when it
// was created, or the task is not the attached one).
func (m *Model) stamp(taskID string) string {
	if m.task.ID != taskID {
		return ""
	}
	return outbox.SessionStamp(m.task)
}

// noteDelivering counts a delivery command (the panel's spinner).
func (m *Model) noteDelivering() { m.held.inflight++ }

// ---- user actions ----

// submit writes the composer's text down with intent (send: then delivers
// it; hold: keeps it). It shows at once in the held panel.
func (m *Model) submit(intent outbox.Intent) tea.Cmd {
	text := m.comp.value()
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if m.held.editing != "" {
		return m.saveEdit()
	}
	m.comp.pushHistory(text)
	m.comp.reset()
	m.held.nextLocal++
	l := localMsg{id: m.held.nextLocal, text: text, intent: intent}
	m.held.local = append(m.held.local, l)
	m.tr.toBottom(m.source(), m.transcriptHeight())
	if intent == outbox.IntentSend {
		m.noteDelivering()
	}
	return m.addCmd(l, m.comp.web)
}

// startEdit loads the selected held message into the composer.
func (m *Model) startEdit() tea.Cmd {
	msg, ok := m.selectedHeld()
	if !ok {
		return nil
	}
	if msg.State == outbox.Sending {
		m.setFlash("message "+msg.ID+" is being delivered — it can't be edited", true)
		return nil
	}
	m.held.editing, m.held.stash = msg.ID, m.comp.value()
	m.comp.reset()
	m.comp.setValue(msg.Text)
	m.setFlash("editing held message "+msg.ID+" — enter saves, esc cancels", false)
	return m.focusComposer()
}

// saveEdit writes the composer's text back to the message being edited
// and gives the composer its earlier text again.
func (m *Model) saveEdit() tea.Cmd {
	id, text := m.held.editing, m.comp.value()
	if strings.TrimSpace(text) == "" {
		m.setFlash("a held message can't be empty — esc cancels the edit, d in the held panel deletes it", true)
		return nil
	}
	m.endEdit()
	return tea.Batch(m.changeCmd(opEdit, id, text, func(q *outbox.Queue) error {
		msg, err := q.Find(id)
		if err != nil {
			return err
		}
		if msg.State == outbox.Sending {
			return outbox.ErrState
		}
		return q.Edit(msg.ID, text)
	}))
}

// cancelEdit drops the edit; the message keeps its text.
func (m *Model) cancelEdit() {
	id := m.held.editing
	m.endEdit()
	m.setFlash("edit of "+id+" cancelled", false)
}

func (m *Model) endEdit() {
	m.comp.reset()
	m.comp.setValue(m.held.stash)
	m.held.editing, m.held.stash = "", ""
}

// leaveEdit saves an edit in progress when the user leaves the task.
func (m *Model) leaveEdit() tea.Cmd {
	if m.held.editing == "" {
		return nil
	}
	if strings.TrimSpace(m.comp.value()) == "" {
		m.endEdit()
		return nil
	}
	return m.saveEdit()
}

func (m *Model) selectedHeld() (outbox.Message, bool) {
	p := m.held.pending()
	if m.held.sel < 0 || m.held.sel >= len(p) {
		return outbox.Message{}, false
	}
	return p[m.held.sel], true
}

func (m *Model) moveHeld(delta int) tea.Cmd {
	msg, ok := m.selectedHeld()
	if !ok {
		return nil
	}
	to := m.held.sel + delta
	if to < 0 || to >= len(m.held.pending()) {
		return nil
	}
	m.held.sel = to
	return m.changeCmd(opMove, msg.ID, "", func(q *outbox.Queue) error { return q.Move(msg.ID, to) })
}

func (m *Model) dropHeld(op outboxOp) tea.Cmd {
	if s, ok := m.selectedStray(); ok {
		return m.strayCmd(op, s)
	}
	msg, ok := m.selectedHeld()
	if !ok {
		return nil
	}
	if op == opToComposer && msg.State == outbox.Sending {
		m.setFlash("message "+msg.ID+" is being delivered", true)
		return nil
	}
	return m.dropCmd(op, msg.ID)
}

func (m *Model) releaseHeld() tea.Cmd {
	if s, ok := m.selectedStray(); ok {
		m.setFlash(m.orphanRefusal(s.msg.ID), true)
		return nil
	}
	msg, ok := m.selectedHeld()
	if !ok {
		return nil
	}
	if m.isOrphan(msg) {
		m.setFlash(m.orphanRefusal(msg.ID), true)
		return nil
	}
	return m.deliverCmd(opRelease, m.held.taskID, msg.ID)
}

func (m *Model) togglePause() tea.Cmd {
	paused := !m.held.paused()
	return m.changeCmd(opPause, "", "", func(q *outbox.Queue) error { return q.SetPaused(paused) })
}

// retryHeld delivers now every message the user sent that is waiting.
func (m *Model) retryHeld() tea.Cmd {
	if !m.held.waitingSend() {
		m.setFlash("nothing to retry", false)
		return nil
	}
	return m.flushCmd(m.held.taskID)
}

func (m *Model) flushCmd(taskID string) tea.Cmd {
	if taskID == m.held.taskID {
		if m.held.flushBusy {
			m.held.flushAgain = true
			return nil
		}
		m.held.flushBusy = true
	}
	return m.deliverCmd(opFlush, taskID, "")
}

// ---- auto-delivery ----

// paceNow is pace's clock: the model's, or the time of the last pace
// timer that fired if that is later (a timer never fires early in a real
// program; tests fire them without waiting).
func (m *Model) paceNow() time.Time {
	if m.held.clock.After(m.now) {
		return m.held.clock
	}
	return m.now
}

// deliveryTriggers runs after every Update: it tells pace what the UI sees
// of the attached task (its stream live, its status, an edit in progress),
// runs the deliveries pace asks for, and arms the timer it wants.
func (m *Model) deliveryTriggers() tea.Cmd {
	h := &m.held
	if m.mode != modeTask || h.taskID == "" || !m.caps.Send || h.pace == nil {
		return nil
	}
	now := m.paceNow()
	h.pace.Session(now, m.connSeen && m.conn.Phase == sse.PhaseLive, m.tl.Status())
	h.pace.Block(h.editing != "")
	var cmds []tea.Cmd
	for {
		act, next := h.pace.Step(now)
		switch act {
		case outbox.ActNext:
			cmds = append(cmds, m.deliverCmd(opNext, h.taskID, ""))
			continue
		case outbox.ActFlush:
			cmds = append(cmds, m.flushCmd(h.taskID))
			continue
		}
		if !next.Equal(h.timerAt) {
			h.timerAt = next
			h.timerSeq++
			if !next.IsZero() {
				cmds = append(cmds, m.after(max(next.Sub(now), 0), heldSettledMsg{gen: m.gen, seq: h.timerSeq, at: next}))
			}
		}
		return tea.Batch(cmds...)
	}
}

// handleHeldSettled: pace's timer fired; deliveryTriggers asks it again.
func (m *Model) handleHeldSettled(msg heldSettledMsg) tea.Cmd {
	h := &m.held
	if msg.gen != m.gen || msg.seq != h.timerSeq {
		return nil
	}
	h.timerAt = time.Time{}
	if msg.at.After(h.clock) {
		h.clock = msg.at
	}
	return nil
}

// ---- results ----

func (m *Model) handleOutbox(msg outboxMsg) tea.Cmd {
	h := &m.held
	current := m.mode == modeTask && msg.taskID == h.taskID
	sameAttach := current && msg.gen == m.gen // the flags below are per attach
	var cmds []tea.Cmd
	if current {
		if msg.q != nil && msg.seq > h.seq {
			h.q, h.msgs, h.seq = msg.q, msg.q.Pending(), msg.seq
			if h.pace != nil {
				h.pace.Queue(msg.q) // a resume by anyone on an idle task delivers
			}
			h.sel = min(max(h.sel, 0), max(len(h.msgs)+len(h.strays)-1, 0))
			if m.focus == focusHeld && len(h.msgs)+len(h.strays) == 0 {
				cmds = append(cmds, m.focusComposer())
			}
		}
	}
	if sameAttach {
		switch msg.op {
		case opAdd:
			for i, l := range h.local {
				if l.id == msg.local {
					h.local = append(h.local[:i:i], h.local[i+1:]...)
					break
				}
			}
			if msg.intent == outbox.IntentSend {
				h.inflight = max(h.inflight-1, 0)
			}
		case opNext, opFlush, opRelease:
			h.inflight = max(h.inflight-1, 0)
		}
	}
	if current {
		if h.q == nil && msg.err != nil && msg.op == opLoad {
			m.setFlash("held messages: "+msg.err.Error(), true)
		}
	}
	for _, r := range msg.res {
		if r.Delivered && current {
			m.tl.NoteSent(r.Message.DaemonID, r.Message.Text, r.Message.Queued)
		}
	}
	if sameAttach && h.pace != nil && (msg.op == opAdd || msg.op == opNext || msg.op == opFlush || msg.op == opRelease) {
		act := outbox.ActNone // the user's own send
		switch msg.op {
		case opNext:
			act = outbox.ActNext
		case opFlush:
			act = outbox.ActFlush
		}
		h.pace.Done(m.paceNow(), act, msg.res, msg.err)
	}
	switch msg.op {
	case opAdd:
		cmds = append(cmds, m.addDone(msg, current))
	case opEdit:
		if msg.err != nil {
			m.comp.setValue(joinDraft([]string{msg.text}, m.comp.value()))
			m.setFlash("could not save the edit of "+msg.msg.ID+" ("+msg.err.Error()+") — your text is in the composer", true)
		} else {
			m.setFlash("saved "+msg.msg.ID, false)
		}
	case opMove:
		if msg.err != nil {
			m.setFlash("could not move "+msg.msg.ID+": "+msg.err.Error(), true)
		}
	case opDrop:
		if msg.err != nil {
			m.setFlash("could not delete "+msg.msg.ID+": "+msg.err.Error(), true)
		} else {
			m.comp.pushHistory(msg.text)
			m.setFlash("deleted "+msg.msg.ID+" — "+m.keyLabel("history", "↑")+" in an empty composer brings its text back", false)
		}
	case opToComposer:
		if msg.err != nil {
			m.setFlash("could not take "+msg.msg.ID+" back: "+msg.err.Error(), true)
		} else if current {
			m.comp.setValue(joinDraft([]string{msg.text}, m.comp.value()))
			m.setFlash("message "+msg.msg.ID+" moved to the composer", false)
			cmds = append(cmds, m.focusComposer())
		} else {
			m.drafts[msg.taskID] = joinDraft([]string{msg.text}, m.drafts[msg.taskID])
		}
	case opAdopt:
		if msg.err != nil {
			m.setFlash("could not move "+msg.msg.ID+" here: "+msg.err.Error(), true)
		} else {
			m.setFlash("moved "+msg.msg.ID+" here — it is held for this session", false)
		}
	case opRelease:
		m.deliveryFlash(msg, "sent "+msg.msg.ID)
	case opPause:
		switch {
		case msg.err != nil:
			m.setFlash("could not change auto-delivery: "+msg.err.Error(), true)
		case h.paused():
			m.setFlash("auto-delivery paused — held messages wait until you resume (p) or send them (s)", false)
		default:
			m.setFlash("auto-delivery resumed — held messages go one at a time when the task is idle", false)
		}
	case opNext:
		if msg.err != nil {
			m.deliveryFlash(msg, "")
		}
	case opFlush:
		if sameAttach {
			h.flushBusy = false
			if h.flushAgain {
				h.flushAgain = false
				cmds = append(cmds, m.flushCmd(h.taskID))
			}
		}
		n := 0
		for _, r := range msg.res {
			if r.Delivered {
				n++
			}
		}
		switch {
		case msg.err != nil:
			m.deliveryFlash(msg, "")
		case n > 0 && current:
			m.setFlash("delivered "+itoa(n)+" message"+plural(n)+" sent while the daemon was away", false)
		}
	case opRecover:
		cmds = append(cmds, m.recoverDone(msg, current))
	}
	return tea.Batch(cmds...)
}

// addDone reports a submitted message: written down and sent, queued, kept
// because the daemon is unreachable, or not written down at all (then it
// is back in the composer, so nothing typed is lost).
func (m *Model) addDone(msg outboxMsg, current bool) tea.Cmd {
	if msg.msg.ID == "" {
		// Not written down: nothing was posted.
		if current {
			m.comp.setValue(joinDraft([]string{msg.text}, m.comp.value()))
		} else {
			m.drafts[msg.taskID] = joinDraft([]string{msg.text}, m.drafts[msg.taskID])
		}
		m.setFlash("could not write the message down ("+errText(msg.err)+") — it is back in the composer", true)
		return nil
	}
	if msg.intent == outbox.IntentHold {
		m.setFlash("held "+msg.msg.ID+" — "+m.held.note().String()+"; shift+tab to edit or reorder", false)
		return nil
	}
	if msg.msg.State == outbox.Sent {
		if m.flash.err {
			m.flash = flash{seq: m.flash.seq} // the error it reported is resolved
		}
		if msg.msg.Queued {
			m.setFlash("queued — the agent reads it after this turn", false)
		}
		return nil
	}
	m.deliveryFlash(msg, "")
	return nil
}

// deliveryFlash says what became of a delivery: ok, or why not and where
// the message is.
func (m *Model) deliveryFlash(msg outboxMsg, ok string) {
	if msg.err == nil {
		if ok != "" {
			m.setFlash(ok, false)
		}
		return
	}
	where := ""
	if msg.taskID != m.held.taskID || m.mode != modeTask {
		where = " (task " + shortID(msg.taskID) + ")"
	}
	what := "message"
	if msg.msg.ID != "" {
		what += " " + msg.msg.ID
	}
	var note string
	switch {
	case errors.Is(msg.err, outbox.ErrNotDue):
		m.setFlash(what+" is not waiting any more"+where, false)
		return
	case outbox.OutcomeOf(msg.err) == outbox.OutcomePermanent:
		note = " refused" + where + ", kept: edit, send or delete it"
	case errors.Is(msg.err, outbox.ErrBusy):
		// Not a failure: the server keeps no queue (Suna). What it waits
		// for is the rule's word, for the attached task.
		if where == "" {
			m.setFlash(what+" held — "+m.held.note().String(), false)
		} else {
			m.setFlash(what+" held"+where+" until its run ends", false)
		}
		return
	case msg.msg.State == outbox.Sending:
		note = " not confirmed" + where + ", kept: checked before any resend"
	default:
		note = " kept" + where + ", sent when the daemon answers again"
	}
	m.setFlash(what+note+" — "+errText(msg.err), true)
}

// recoverDone reports what a cancel handed back; if it could not be
// written down, the texts go to the composer instead.
func (m *Model) recoverDone(msg outboxMsg, current bool) tea.Cmd {
	n := len(msg.texts)
	if msg.err != nil {
		if current {
			m.comp.setValue(joinDraft(msg.texts, m.comp.value()))
			m.setFlash("run cancelled — could not hold the "+itoa(n)+" queued message"+plural(n)+" ("+msg.err.Error()+"); they are in the composer", true)
			return m.focusComposer()
		}
		m.drafts[msg.taskID] = joinDraft(msg.texts, m.drafts[msg.taskID])
		return nil
	}
	if current {
		m.setFlash("run cancelled — "+itoa(n)+" queued message"+plural(n)+" held, auto-delivery paused (shift+tab: edit, p resumes)", false)
	}
	return nil
}

// joinDraft puts texts before what is already typed.
func joinDraft(texts []string, current string) string {
	if strings.TrimSpace(current) != "" {
		texts = append(texts[:len(texts):len(texts)], current)
	}
	return strings.Join(texts, "\n\n")
}
