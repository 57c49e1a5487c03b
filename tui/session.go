package tui

import (
	"context"
	"errors"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// Results of the tea.Cmds that call the Backend. Each carries what it needs
// to be matched with current state (generation, task id, local id), since
// the user may have moved on by the time it arrives.
type (
	tasksLoadedMsg struct {
		tasks []events.Task
		err   error
	}
	taskLoadedMsg struct {
		gen  uint64
		task events.Task
		err  error
	}
	sendDoneMsg struct {
		taskID string
		local  int
		res    sendResult
		err    error
	}
	cancelDoneMsg struct {
		gen     uint64
		taskID  string
		pending []events.QueuedMessage
		err     error
	}
)

func (m *Model) loadTasksCmd() tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := m.callCtx()
		defer cancel()
		ts, err := m.b.Tasks(ctx)
		return tasksLoadedMsg{tasks: ts, err: err}
	}
}

func (m *Model) loadTaskCmd(gen uint64, id string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := m.callCtx()
		defer cancel()
		t, err := m.b.Task(ctx, id)
		return taskLoadedMsg{gen: gen, task: t, err: err}
	}
}

// attach switches to a task: a fresh timeline, the task stream (replayed
// from the start by the daemon) and the task's saved draft.
func (m *Model) attach(t events.Task) tea.Cmd {
	m.saveDraft()
	if known, ok := m.list.byID(t.ID); ok {
		t = mergeTask(known, t)
	}
	m.gen++
	m.mode = modeTask
	m.overlay = ovNone
	m.task = t
	m.tl = newReducer()
	m.tl.SetTask(t)
	m.tr = newTranscript()
	m.expanded = make(map[*events.Item]bool)
	m.search = searchState{}
	m.conn, m.connSeen, m.streamErr = connState{}, false, nil
	m.queueOpen, m.canceling = false, false
	m.rows, m.owners = m.rows[:0], m.owners[:0]
	m.comp.reset()
	m.comp.setValue(m.drafts[t.ID])
	delete(m.drafts, t.ID)
	m.ctl.WatchTask(m.gen, t.ID)
	return tea.Batch(m.focusComposer(), m.loadTaskCmd(m.gen, t.ID))
}

// detach goes back to the task list; the task stream ends, the draft stays.
func (m *Model) detach() tea.Cmd {
	m.saveDraft()
	m.gen++
	m.ctl.WatchTask(m.gen, "")
	m.mode = modeList
	m.overlay = ovNone
	m.list.selectID(m.task.ID)
	// Let the timeline go: a 10,000-item session should not stay in memory
	// behind the task list.
	m.tl = newReducer()
	m.expanded = make(map[*events.Item]bool)
	m.rows, m.owners = m.rows[:0], m.owners[:0]
	return nil
}

func (m *Model) saveDraft() {
	if m.mode == modeTask && m.task.ID != "" {
		if v := m.comp.value(); strings.TrimSpace(v) != "" {
			m.drafts[m.task.ID] = v
		}
	}
}

// handleStream applies one coalesced batch of decoded events.
func (m *Model) handleStream(msg streamBatchMsg) tea.Cmd {
	if msg.Src == srcDaemon {
		if msg.State != nil {
			m.daemonConn, m.daemonSeen = *msg.State, true
		}
		for i := range msg.Events {
			m.applyDaemonEvent(&msg.Events[i])
		}
		if msg.Ended && msg.Err != nil && !errors.Is(msg.Err, context.Canceled) {
			m.daemonConn = connState{Phase: client.PhaseFailed, Err: msg.Err, Since: m.now}
		}
		return nil
	}
	if msg.Gen != m.gen || m.mode != modeTask {
		return nil // a batch from a stream we already left
	}
	if msg.State != nil {
		m.conn, m.connSeen = *msg.State, true
	}
	for _, ev := range msg.Events {
		m.tl.Apply(ev)
	}
	if msg.Ended && msg.Err != nil && !errors.Is(msg.Err, context.Canceled) {
		m.streamErr = msg.Err
		if m.conn.Phase != client.PhaseFailed {
			m.conn = connState{Phase: client.PhaseFailed, Err: msg.Err, Since: m.now}
		}
	}
	m.comp.setBusy(m.busy())
	if m.todosOpen && len(m.tl.Todos()) == 0 {
		m.todosOpen = false
	}
	return nil
}

func (m *Model) applyDaemonEvent(ev *events.Event) {
	switch ev.Kind {
	case events.KindTasksSynced:
		m.list.replace(ev.Tasks)
	case events.KindTaskChanged:
		if ev.Task == nil {
			return
		}
		m.list.upsert(*ev.Task)
		if m.mode == modeTask && ev.Task.ID == m.task.ID {
			m.task = mergeTask(m.task, *ev.Task)
			m.tl.SetTask(m.task)
			m.comp.setBusy(m.busy())
		}
	}
}

func (m *Model) handleTasksLoaded(msg tasksLoadedMsg) {
	if msg.err != nil {
		m.setFlash("could not list tasks: "+msg.err.Error(), true)
		return
	}
	m.list.load(msg.tasks)
}

func (m *Model) handleTaskLoaded(msg taskLoadedMsg) {
	if msg.gen != m.gen {
		return
	}
	if msg.err != nil {
		m.setFlash("task "+shortID(m.task.ID)+": "+msg.err.Error(), true)
		return
	}
	m.task = mergeTask(m.task, msg.task)
	m.tl.SetTask(m.task)
	m.list.upsert(m.task)
	m.comp.setBusy(m.busy())
}

// mergeTask overlays the fields b knows on a (daemon updates may be
// partial: stopped tasks have no model or queue).
func mergeTask(a, b events.Task) events.Task {
	if b.Name != "" {
		a.Name = b.Name
	}
	if b.Cwd != "" {
		a.Cwd = b.Cwd
	}
	if b.Status != "" {
		a.Status = b.Status
	}
	if b.Model != "" {
		a.Model = b.Model
	}
	if b.Port != 0 {
		a.Port = b.Port
	}
	if !b.Created.IsZero() {
		a.Created = b.Created
	}
	if !b.Updated.IsZero() {
		a.Updated = b.Updated
	}
	if b.QueuedMessages != nil || b.Status == events.StatusStopped {
		a.QueuedMessages = b.QueuedMessages
	}
	a.ID = orString(b.ID, a.ID)
	a.WebSearch = b.WebSearch || a.WebSearch
	return a
}

// busy is whether the agent is running a turn now.
func (m *Model) busy() bool {
	return m.mode == modeTask && m.tl.Status() == events.RunGenerating
}

// ---- sending ----

type sendState uint8

const (
	sendPending sendState = iota
	sendFailed
)

// outgoing is a message the user sent that the daemon has not confirmed.
// It stays visible (sending…, then failed with its error) until the POST
// succeeds, so nothing typed is ever lost.
type outgoing struct {
	local  int
	taskID string
	text   string
	web    bool
	state  sendState
	err    error
}

// submit sends the composer's text. The message shows at once in the
// outbox; the POST reply reconciles it with the timeline.
func (m *Model) submit() tea.Cmd {
	text := m.comp.value()
	if strings.TrimSpace(text) == "" {
		return nil
	}
	m.comp.pushHistory(text)
	m.comp.reset()
	m.nextLocal++
	o := &outgoing{local: m.nextLocal, taskID: m.task.ID, text: text, web: m.comp.web}
	m.outbox = append(m.outbox, o)
	m.tr.toBottom(m.source(), m.transcriptHeight())
	return m.sendCmd(o)
}

func (m *Model) sendCmd(o *outgoing) tea.Cmd {
	taskID, local, text, web := o.taskID, o.local, o.text, o.web
	return func() tea.Msg {
		ctx, cancel := m.callCtx()
		defer cancel()
		res, err := m.b.Send(ctx, taskID, text, web)
		return sendDoneMsg{taskID: taskID, local: local, res: res, err: err}
	}
}

func (m *Model) handleSendDone(msg sendDoneMsg) tea.Cmd {
	idx := -1
	for i, o := range m.outbox {
		if o.local == msg.local {
			idx = i
			break
		}
	}
	if idx < 0 {
		return nil
	}
	o := m.outbox[idx]
	if msg.err != nil {
		o.state, o.err = sendFailed, msg.err
		where := ""
		if m.mode != modeTask || o.taskID != m.task.ID {
			where = " to task " + shortID(o.taskID) + " (open it to retry)"
		}
		m.setFlash("message not sent"+where+": "+msg.err.Error(), true)
		return nil
	}
	m.outbox = append(m.outbox[:idx], m.outbox[idx+1:]...)
	if m.flash.err {
		m.flash = flash{seq: m.flash.seq} // the error it reported is resolved
	}
	if m.mode == modeTask && o.taskID == m.task.ID {
		m.tl.NoteSent(msg.res.ID, o.text, msg.res.Queued)
		if msg.res.Queued {
			m.setFlash("queued — the agent reads it after this turn", false)
		}
	}
	return nil
}

// retryFailed resends every failed message of the current task.
func (m *Model) retryFailed() tea.Cmd {
	var cmds []tea.Cmd
	for _, o := range m.outbox {
		if o.taskID == m.task.ID && o.state == sendFailed {
			o.state, o.err = sendPending, nil
			cmds = append(cmds, m.sendCmd(o))
		}
	}
	if len(cmds) == 0 {
		m.setFlash("nothing to retry", false)
		return nil
	}
	return tea.Batch(cmds...)
}

// popFailed moves the newest failed message of this task back into the
// (empty) composer for editing.
func (m *Model) popFailed() bool {
	for i := len(m.outbox) - 1; i >= 0; i-- {
		o := m.outbox[i]
		if o.taskID == m.task.ID && o.state == sendFailed {
			m.outbox = append(m.outbox[:i], m.outbox[i+1:]...)
			m.comp.setValue(o.text)
			m.comp.web = o.web
			m.setFlash("failed message back in the composer — enter sends it", false)
			return true
		}
	}
	return false
}

// taskOutbox is the current task's unconfirmed messages, in send order.
func (m *Model) taskOutbox() []*outgoing {
	var out []*outgoing
	for _, o := range m.outbox {
		if o.taskID == m.task.ID {
			out = append(out, o)
		}
	}
	return out
}

// ---- cancelling ----

// askCancel asks for confirmation before cancelling the run.
func (m *Model) askCancel() {
	if !m.caps.Cancel {
		return
	}
	if !m.busy() {
		m.setFlash("nothing to cancel — the agent is idle", false)
		return
	}
	m.overlay = ovConfirmCancel
}

func (m *Model) cancelRun() tea.Cmd {
	if m.canceling {
		return nil
	}
	m.canceling = true
	gen, id := m.gen, m.task.ID
	return func() tea.Msg {
		ctx, cancel := m.callCtx()
		defer cancel()
		pending, err := m.b.Cancel(ctx, id)
		return cancelDoneMsg{gen: gen, taskID: id, pending: pending, err: err}
	}
}

// handleCancelDone puts the messages the daemon dropped from its queue back
// into the composer, so cancelling never loses what was queued.
func (m *Model) handleCancelDone(msg cancelDoneMsg) tea.Cmd {
	if msg.gen == m.gen {
		m.canceling = false
	}
	if msg.err != nil {
		if errors.Is(msg.err, errNotRunning) {
			m.setFlash("nothing to cancel — the run had already ended", false)
		} else {
			m.setFlash("cancel failed: "+msg.err.Error(), true)
		}
		return nil
	}
	texts := make([]string, 0, len(msg.pending))
	for _, q := range msg.pending {
		if t := strings.TrimSpace(q.Text); t != "" {
			texts = append(texts, t)
		}
	}
	current := m.mode == modeTask && msg.taskID == m.task.ID
	if msg.gen != m.gen && !current {
		// Detached meanwhile: keep the texts as that task's draft. (When
		// the user came back to the same task, they go to the composer:
		// a draft would be overwritten by the next saveDraft.)
		if len(texts) > 0 {
			m.drafts[msg.taskID] = joinDraft(texts, m.drafts[msg.taskID])
		}
		return nil
	}
	m.tl.NoteCancelled(msg.pending)
	m.comp.setBusy(m.busy())
	if len(texts) == 0 {
		m.setFlash("run cancelled", false)
		return nil
	}
	m.comp.setValue(joinDraft(texts, m.comp.value()))
	m.setFlash("run cancelled — "+itoa(len(texts))+" queued message"+plural(len(texts))+" moved to the composer", false)
	return m.focusComposer()
}

// joinDraft puts returned queue texts before what is already typed.
func joinDraft(texts []string, current string) string {
	if strings.TrimSpace(current) != "" {
		texts = append(texts, current)
	}
	return strings.Join(texts, "\n\n")
}
