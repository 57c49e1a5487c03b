package tui

import (
	"context"
	"errors"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// Results of the tea.Cmds that call the backend. Each carries what it needs
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
		if ts, err, ok := m.cfg.tasks.take(ctx); ok {
			return tasksLoadedMsg{tasks: ts, err: err}
		}
		ts, err := m.b.Sessions(ctx)
		return tasksLoadedMsg{tasks: ts, err: err}
	}
}

func (m *Model) loadTaskCmd(gen uint64, id string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := m.callCtx()
		defer cancel()
		t, err := m.b.Session(ctx, id)
		return taskLoadedMsg{gen: gen, task: t, err: err}
	}
}

// attach switches to a task: a fresh timeline, the task stream (replayed
// from the start by the daemon), the task's saved draft and its held
// messages.
func (m *Model) attach(t events.Task) tea.Cmd {
	saved := m.leaveEdit()
	m.saveDraft()
	if known, ok := m.list.byID(t.ID); ok {
		t = known.Merge(t)
	}
	m.gen++
	m.mode = modeTask
	m.overlay = ovNone
	m.task = t
	if sc, ok := m.b.(client.SessionCapabler); ok {
		// What this session can do (a local CLI's without a messaging
		// socket is read-only, and says why).
		c, why := sc.SessionCapabilities(context.Background(), t.ID)
		m.caps = capsOf(sessionBackend{m.b, c})
		if why != "" {
			m.caps.Note = why
		}
		m.keys = newKeyMap().with(m.cfg.Keys)
		m.keys.limitTo(m.caps)
	}
	m.tl = m.newTimeline(t.ID)
	m.tl.SetTask(t)
	m.tr = newTranscript()
	m.expanded = make(map[*events.Item]bool)
	m.search = searchState{}
	m.conn, m.connSeen, m.streamErr = connState{}, false, nil
	m.setCatchingUp(false)
	m.queueOpen, m.canceling = false, false
	m.rows, m.owners = m.rows[:0], m.owners[:0]
	m.comp.reset()
	m.comp.setValue(m.drafts[t.ID])
	delete(m.drafts, t.ID)
	m.resetHeld(t.ID)
	m.watchTask(t.ID)
	return tea.Batch(saved, m.focusComposer(), m.loadTaskCmd(m.gen, t.ID), m.loadHeldCmd(t.ID), m.loadStraysCmd(), m.seenCmd())
}

// detach goes back to the task list; the task stream ends, the draft stays.
func (m *Model) detach() tea.Cmd {
	saved := m.leaveEdit()
	m.saveDraft()
	m.gen++
	m.ctl.WatchTask(m.gen, "")
	m.setCatchingUp(false)
	m.mode = modeList
	m.overlay = ovNone
	m.list.selectID(m.task.ID)
	// Let the timeline go: a 10,000-item session should not stay in memory
	// behind the task list.
	m.tl = m.spill.timeline("")
	m.expanded = make(map[*events.Item]bool)
	m.rows, m.owners = m.rows[:0], m.owners[:0]
	m.resetHeld("")
	m.landing = landing{}
	// Back to the backend and outbox shown before a replay from the index
	// first: the held counts are the list's.
	closeReplay := closeCmd(m.leaveReplay())
	return tea.Batch(saved, m.heldCountsCmd(), m.leaveBoardSession(), closeReplay)
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
		var cmd tea.Cmd
		if msg.Tasks != nil {
			m.applyTasks(msg.Tasks)
			if m.mode == modeList {
				cmd = m.heldCountsCmd()
			} else {
				cmd = m.loadStraysCmd() // a session that just went makes orphans
			}
		}
		if msg.Ended && msg.Err != nil && !errors.Is(msg.Err, context.Canceled) {
			m.daemonConn = connState{Phase: sse.PhaseFailed, Err: msg.Err, Since: m.now}
		}
		return cmd
	}
	if msg.Gen != m.gen || m.mode != modeTask {
		return nil // a batch from a stream we already left
	}
	if msg.State != nil {
		m.conn, m.connSeen = *msg.State, true
	}
	if msg.Events.Len() > 0 {
		m.warm.streamAt = m.now
	}
	m.setCatchingUp(msg.Behind && !msg.Ended)
	var cmd tea.Cmd
	for c, chunk := range msg.Events {
		for i := range chunk {
			ev := &chunk[i]
			if isResetEvent(ev) {
				m.restartTimeline()
				continue
			}
			if isReplacedNotice(ev) {
				cmd = m.sessionReplaced()
			}
			m.tl.Apply(*ev)
			m.held.event(*ev, m.tl.Status())
		}
		// Applied: the chunk's texts can go while the rest of a replay's
		// batch (megabytes) is applied.
		msg.Events[c] = nil
	}
	m.tl.Freeze(m.hotItems)
	if msg.Ended && msg.Err != nil && !errors.Is(msg.Err, context.Canceled) {
		m.streamErr = msg.Err
		if m.conn.Phase != sse.PhaseFailed {
			m.conn = connState{Phase: sse.PhaseFailed, Err: msg.Err, Since: m.now}
		}
	}
	if m.todosOpen && len(m.tl.Todos()) == 0 {
		m.todosOpen = false
	}
	return tea.Batch(cmd, m.landOnHit(msg))
}

// setCatchingUp records whether the UI is behind the task stream: while
// it is (a long replay), the renderer keeps little of what it draws.
func (m *Model) setCatchingUp(on bool) {
	if on != m.catchingUp {
		m.catchingUp = on
		m.rend.CatchingUp(on)
	}
}

// applyTasks takes the watched task list. The attached task takes what
// changed in its entry since the last list (its status, as the daemon's
// task changes tell it); a first sight of it in a list is not newer than
// what attaching read (GET /task answers fresher than the list).
func (m *Model) applyTasks(ts []events.Task) {
	var before events.Task
	var had bool
	if m.mode == modeTask {
		before, had = m.list.byID(m.task.ID)
	}
	m.list.replace(ts)
	if m.mode != modeTask {
		return
	}
	now, ok := m.list.byID(m.task.ID)
	if !ok || !had || before.Equal(now) {
		return
	}
	m.task = m.task.Merge(now)
	m.tl.SetTask(m.task)
}

func (m *Model) handleTasksLoaded(msg tasksLoadedMsg) {
	if msg.err != nil {
		m.list.answered, m.list.loadErr = true, msg.err
		m.setFlash("could not list tasks: "+errReason(msg.err), true)
		return
	}
	m.list.load(msg.tasks)
}

func (m *Model) handleTaskLoaded(msg taskLoadedMsg) {
	if msg.gen != m.gen {
		return
	}
	if msg.err != nil {
		m.setFlash("task "+shortID(m.task.ID)+": "+errReason(msg.err), true)
		return
	}
	m.task = m.task.Merge(msg.task)
	m.tl.SetTask(m.task)
	if m.replay == nil { // a replay from the index is no session of the list's backend
		m.list.upsert(m.task)
	}
}

// busy is whether the agent is running a turn now.
func (m *Model) busy() bool {
	return m.mode == modeTask && m.tl.Status() == events.RunGenerating
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

// handleCancelDone puts the messages the daemon dropped from its queue at
// the front of the task's held messages, in order, each its own message,
// with auto-delivery paused: cancelling never loses what was queued, and
// the composer keeps what is being typed.
func (m *Model) handleCancelDone(msg cancelDoneMsg) tea.Cmd {
	if msg.gen == m.gen {
		m.canceling = false
	}
	if msg.err != nil {
		if errors.Is(msg.err, client.ErrNotRunning) {
			m.setFlash("nothing to cancel — the run had already ended", false)
		} else {
			m.setFlash("cancel failed: "+msg.err.Error(), true)
		}
		return nil
	}
	texts := make([]string, 0, len(msg.pending))
	for _, q := range msg.pending {
		if strings.TrimSpace(q.Text) != "" {
			texts = append(texts, q.Text)
		}
	}
	current := m.mode == modeTask && msg.taskID == m.task.ID
	if current {
		m.tl.NoteCancelled(msg.pending)
		if len(texts) == 0 {
			m.setFlash("run cancelled", false)
		}
	}
	if len(texts) == 0 {
		return nil
	}
	return m.recoverCmd(msg.gen, msg.taskID, texts)
}

// sessionBackend is a backend seen with the capabilities of one of its sessions.
type sessionBackend struct {
	client.Backend
	caps client.Capabilities
}

func (b sessionBackend) Capabilities() client.Capabilities { return b.caps }
