package events

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
	"weak"

	"github.com/perch-tui/perch/internal/idset"
)

// Timeline is the pure reducer from decoded events to what a user sees:
// transcript items, the run status, the queue, todos and metadata. It does
// no IO; feed it with Apply and the Note* methods, in arrival order, from a
// single goroutine.
type Timeline struct {
	items    []*Item
	tools    map[string]*Item // tool_call id -> tool item
	running  []*Item          // tool items set running since runs last ended (some may have finished)
	turns    map[string]*Item // assistant item id -> item (streamed turns, upserts)
	posts    postIndex        // PostToolCall envelope id -> tool item (for Pruned)
	queue    []QueuedMessage
	sent     map[string]string // message id -> text the client sent
	todos    []Todo
	meta     Meta
	runTurns map[*Item]bool // the assistant turns of the last run (Meta.Run)
	status   RunStatus
	stopped  bool // the daemon says no task process exists
	version  uint64
	store    BodyStore // where long finished texts go (nil: memory)
	spill    SpillOptions
	spillErr error                    // why store stopped taking texts
	held     []heldText               // finished texts waiting in memory, oldest first (SpillOptions.Hold)
	heldSize int                      // their bytes
	shells   map[shellKey]*ToolResult // shared Results of spilled outputs (spilledShell)

	unqueued    idset.Set // message ids the daemon consumed or dropped (one a turn: hashed)
	foreignNote *Item     // the one notice that counts foreign frames

	// What Settled and Release keep (settle.go): the items before
	// boundary came before the latest run end, the first
	// settled of them are final, and released items went before them.
	boundary, settled, released int
	lag                         int // SettleAfter

	// What Freeze keeps (cold.go): the records of frozen items (by
	// index; their items are nil), the store they are in, how far
	// Freeze went, and the items read back that something still holds.
	frozen      []coldRef
	coldStore   BodyStore
	frozenTo    int
	nfrozen     int
	thawed      map[int]weak.Pointer[Item]
	thawedSwept int
}

// NewTimeline returns an empty timeline.
func NewTimeline() *Timeline {
	return &Timeline{
		tools: make(map[string]*Item),
		turns: make(map[string]*Item),
		sent:  make(map[string]string),
	}
}

// Items returns the transcript in order. The slice and items are owned by
// the timeline: read them, don't keep them across Apply calls. A timeline
// that froze items reads each back into a new slice: views use Len and
// At, which read back only what they show.
func (t *Timeline) Items() []*Item {
	if t.nfrozen == 0 {
		return t.items
	}
	out := make([]*Item, len(t.items))
	for i := range out {
		out[i] = t.At(i)
	}
	return out
}

// Len is the number of items.
func (t *Timeline) Len() int { return len(t.items) }

// Queue returns the pending messages, in queue order.
func (t *Timeline) Queue() []QueuedMessage { return t.queue }

// Status is the derived run status.
func (t *Timeline) Status() RunStatus { return t.status }

// Todos is the agent's latest todo list.
func (t *Timeline) Todos() []Todo { return t.todos }

// Meta returns model, tools, context size and token totals.
func (t *Timeline) Meta() Meta { return t.meta }

// Version grows whenever anything in the timeline changes.
func (t *Timeline) Version() uint64 { return t.version }

// Apply feeds one decoded event. It reports whether anything visible
// changed. Replays are the decoder's business (maria's decoder drops the
// events a reconnect repeats): every event applied here is new, and an
// assistant message whose id is a turn already shown completes that turn.
//
// The timeline follows a task stream: a frame maria does not send there
// (KindForeign, or a daemon stream event) is never a conversation event. It
// is only counted (Meta.ForeignFrames) and shown in one notice.
func (t *Timeline) Apply(ev Event) bool {
	if ev.Kind == KindForeign || ev.Dialect == DialectDaemon {
		t.foreignFrame(ev)
		t.version++
		return true
	}
	changed := t.apply(ev)
	if changed {
		t.version++
	}
	return changed
}

// foreignFrame counts a frame that is not a task stream event.
func (t *Timeline) foreignFrame(ev Event) {

	last := ev.Notice
	if ev.Kind != KindForeign {
		last = fmt.Sprintf("event %s of the daemon stream", ForeignName(ev.Variant))
	}
	t.meta.ForeignFrames++
	t.meta.LastForeign = last
	text := fmt.Sprintf("Ignored %d frames that are not maria events; the last: %s.", t.meta.ForeignFrames, last)
	if t.meta.ForeignFrames == 1 {
		text = "Ignored a frame that is not a maria event: " + last + "."
	}
	if t.foreignNote == nil {
		t.foreignNote = &Item{Kind: ItemNotice, Created: ev.Created, Level: LevelInfo}
		t.add(t.foreignNote)
	} else {
		t.foreignNote.Version++
	}
	t.foreignNote.Text = text
}

func (t *Timeline) apply(ev Event) bool {
	switch ev.Kind {
	case KindInvalid:
		t.notice(ev, LevelWarning, "Could not read an event from the daemon: "+ev.Notice)
	case KindUnknown:
		t.notice(ev, LevelInfo, "Unknown event, shown as is: "+ev.Notice)
	case KindModelLoaded:
		// Only a running task process emits ModelLoaded (it is never
		// persisted), so a stopped task has been resumed.
		t.resumed()
		t.meta.Model = ev.Model
	case KindSystemPromptSet, KindSystemMessage:
		t.meta.SystemPromptLen = len(ev.Text)
	case KindToolAdded:
		for _, n := range t.meta.Tools {
			if n == ev.ToolName {
				return false
			}
		}
		t.meta.Tools = append(t.meta.Tools, ev.ToolName)
	case KindMessageQueued:
		t.enqueue(QueuedMessage{ID: ev.MessageID, Text: ev.Text})
	case KindMessageUnqueued:
		t.unqueued.Add(ev.MessageID)
		t.dequeue(ev.MessageID)
	case KindQueueSnapshot:
		if len(ev.Queue) > 0 {
			t.resumed()
		}
		t.queue = append(t.queue[:0:0], ev.Queue...)
		for i, q := range t.queue {
			if q.Text == "" {
				t.queue[i].Text = t.sent[q.ID]
			}
		}
	case KindPreConversation:
		t.endRunningTools(ToolUnknown)
		if !t.stopped {
			t.status = RunGenerating
		}
		t.meta.RunStarted = ev.Created
		t.meta.RunEnd = RunEndUnknown
		t.newRun()
	case KindPostConversation:
		t.endRunningTools(ToolUnknown)
		t.runEnded()
		if t.meta.RunEnd == RunEndUnknown {
			t.meta.RunEnd = RunEndOK // a cancel or failure came first, and stays
		}
		t.markBoundary()
	case KindCancelled:
		t.endRunningTools(ToolCancelled)
		t.runEnded()
		t.meta.RunEnd = RunEndCancelled
		t.notice(ev, LevelInfo, "Run cancelled.")
		t.markBoundary()
	case KindFailed:
		t.endRunningTools(ToolUnknown)
		t.runEnded()
		text := ev.Text
		if text == "" {
			text = "no details given"
		}
		t.meta.RunEnd = RunEndFailed
		t.notice(ev, LevelError, "Run failed: "+text)
		t.markBoundary()
	case KindUserMessage:
		t.meta.RunEnd = RunEndUnknown // a new turn
		t.newRun()
		it := &Item{Kind: ItemUser, ID: ev.ID, Created: ev.Created, Text: ev.Text}
		t.add(it)
		t.spillItem(it)
	case KindAssistantMessage:
		t.assistant(ev)
	case KindTokenCounted:
		t.meta.ContextTokens = ev.TokenCount
	case KindContextPruned:
		if ev.PrunedTo > 0 {
			t.meta.ContextTokens = ev.PrunedTo
		}
	case KindPruned:
		t.meta.PrunedCount++
		// The index holds the calls in memory only (see Freeze).
		if pos, ok := t.posts.get(ev.PrunedID); ok && pos >= t.released {
			if it := t.items[pos-t.released]; it != nil && it.Tool != nil && !it.Tool.Pruned {
				it.Tool.Pruned = true
				it.Version++
			}
		}
	case KindPreToolCall:
		it := t.tool(ev.Tool.Call, ev.Tool.Name, ev)
		if it.Tool.Result == nil && it.Tool.Status != ToolRunning && !t.stopped {
			it.Tool.Status = ToolRunning
			it.Version++
			t.running = append(t.running, it)
		}
		if len(ev.Tool.Call.Args) > 0 && len(it.Tool.Call.Args) == 0 {
			it.Tool.Call = ev.Tool.Call
			it.Version++
		}
	case KindPostToolCall, KindToolMessage:
		it := t.tool(ev.Tool.Call, ev.Tool.Name, ev)
		if ev.Kind == KindToolMessage && it.Tool.Result != nil {
			return false // the docs tool message repeats a PostToolCall
		}
		it.Tool.Result, it.Tool.spill = ev.Tool.Result, nil
		shareArgs(it.Tool)
		it.Tool.Status = ToolOK
		if ev.Tool.Result.IsError {
			it.Tool.Status = ToolError
		}
		if it.Tool.Name == "" {
			it.Tool.Name = ev.Tool.Name
		}
		it.Version++
		if ev.ID != "" {
			t.posts.set(ev.ID, it.pos)
		}
		if ev.Tool.Result.Todos != nil {
			t.todos = ev.Tool.Result.Todos
		}
		t.spillResult(it)
	case KindTodoUpdated:
		t.todos = ev.Todos
	default:
		return t.applyNormalized(ev)
	}
	return true
}

func (t *Timeline) add(it *Item) {
	it.Version = 1
	it.pos = int32(t.released + len(t.items))
	t.items = append(t.items, it)
}

func (t *Timeline) notice(ev Event, level NoticeLevel, text string) {
	t.add(&Item{Kind: ItemNotice, ID: ev.ID, Created: ev.Created, Level: level, Text: text})
}

// assistant adds an assistant turn and a tool item per call. A message
// whose id is a turn already shown completes it instead: the final form of
// a streamed turn, another report of the same reply (maria's decoder gives
// the docs dialect's second report the first one's id).
func (t *Timeline) assistant(ev Event) {
	if ev.ID != "" {
		if it := t.turns[ev.ID]; it != nil {
			t.finishTurn(it, ev)
			return
		}
	}
	it := &Item{Kind: ItemAssistant, ID: ev.ID, Created: ev.Created, Text: ev.Text,
		ToolCalls: ev.ToolCalls, Usage: ev.Usage,
		Thinking: ev.Thinking, StopReason: ev.StopReason, Incomplete: ev.Incomplete}
	t.add(it)
	t.spillItem(it)
	if ev.ID != "" {
		t.turns[ev.ID] = it
	}
	if ev.Usage != nil {
		t.addUsage(ev.Usage)
	}
	if t.runTurns == nil {
		t.runTurns = map[*Item]bool{}
	}
	t.runTurns[it] = true
	if ev.Usage != nil {
		t.meta.Run.Add(ev.Usage)
	}
	t.callTools(ev)
}

// newRun starts the last run's usage over (a user message, a run's
// start).
func (t *Timeline) newRun() {
	if len(t.runTurns) > 0 || t.meta.Run != (Usage{}) {
		t.meta.Run, t.runTurns = Usage{}, nil
	}
}

func (t *Timeline) addUsage(u *Usage) {
	t.meta.Totals.Add(u)
	if u.InputTokens > 0 {
		t.meta.ContextTokens = u.InputTokens + u.OutputTokens
	}
}

// callTools shows each requested call at once, before its PreToolCall: a
// tool maria does not know gets no Pre/Post at all, and must still show.
func (t *Timeline) callTools(ev Event) {
	for i, c := range ev.ToolCalls {
		if c.ID == "" {
			c.ID = synthID(ev, i)
		}
		t.tool(c, c.Name, ev)
	}
}

func synthID(ev Event, i int) string {
	return "call:" + ev.ID + ":" + strconv.Itoa(i)
}

// tool finds the item of a call, or creates it.
func (t *Timeline) tool(c ToolCall, name string, ev Event) *Item {
	id := c.ID
	if id == "" {
		// No id to pair by: the oldest unfinished call of that name.
		for _, it := range t.items {
			if it != nil && it.Kind == ItemTool && it.Tool.Result == nil && it.Tool.Name == name {
				return it
			}
		}
		id = "anon:" + name + ":" + ev.ID
	}
	if it, ok := t.tools[id]; ok {
		return it
	}
	if name == "" {
		name = c.Name
	}
	st := ToolRunning
	if t.stopped {
		st = ToolUnknown // no task process: nothing can be running
	}
	c.ID = id
	// The item and its ToolItem in one allocation (a long session holds
	// tens of thousands of calls).
	both := &struct {
		item Item
		tool ToolItem
	}{Item{Kind: ItemTool, ID: id, Created: ev.Created}, ToolItem{CallID: id, Name: name, Call: c, Status: st}}
	it := &both.item
	it.Tool = &both.tool
	t.add(it)
	t.tools[id] = it
	if st == ToolRunning {
		t.running = append(t.running, it)
	}
	return it
}

// shareArgs makes a result's details use the call's arguments when the
// result's event carried the same ones, decoded again: a long session
// then holds each call's arguments once.
func shareArgs(t *ToolItem) {
	if r := t.Result; len(r.detailsArgs) > 0 && bytes.Equal(r.detailsArgs, t.Call.Args) {
		r.detailsArgs = t.Call.Args
	}
}

// endRunningTools settles calls that will never get a result. Only the
// items set running since it last ran can be running: a call is running
// from its creation or its PreToolCall.
func (t *Timeline) endRunningTools(to ToolStatus) {
	for _, it := range t.running {
		if it.Tool.Status == ToolRunning {
			it.Tool.Status = to
			it.Version++
		}
	}
	clear(t.running)
	t.running = t.running[:0]
}

func (t *Timeline) runEnded() {
	if !t.stopped {
		t.status = RunIdle
	}
	t.meta.RunStarted = time.Time{}
}

// resumed clears the stopped state: only a live task process sends what
// triggered it.
func (t *Timeline) resumed() {
	if t.stopped {
		t.stopped = false
		t.status = RunIdle
	}
}

func (t *Timeline) enqueue(q QueuedMessage) {
	if t.unqueued.Has(q.ID) {
		return
	}
	if q.Text == "" {
		q.Text = t.sent[q.ID]
	}
	for i := range t.queue {
		if t.queue[i].ID == q.ID {
			if t.queue[i].Text == "" {
				t.queue[i].Text = q.Text
			}
			return
		}
	}
	t.queue = append(t.queue, q)
}

func (t *Timeline) dequeue(id string) bool {
	for i := range t.queue {
		if t.queue[i].ID == id {
			t.queue = append(t.queue[:i:i], t.queue[i+1:]...)
			return true
		}
	}
	return false
}

// SetTask applies what the daemon says about the task (GET /task/{id},
// daemon.task.changed): its status. A stopped task has no process, so its
// unfinished tool calls become unknown.
func (t *Timeline) SetTask(task Task) {
	before := t.status
	switch task.Status {
	case StatusStopped, StatusExited:
		t.stopped = true
		t.status = RunStopped
		t.endRunningTools(ToolUnknown)
	case StatusGenerating, StatusWaiting:
		// A run waiting for the user is not over: nothing held is
		// delivered into it (outbox.Pace delivers on idle only).
		t.stopped = false
		t.status = RunGenerating
	case StatusIdle:
		t.stopped = false
		t.status = RunIdle
	default:
		return
	}
	if t.status != before {
		t.version++
	}
}

// SetQueue replaces the queue with a fresh one from the daemon
// (GET …/queued-messages or a fresh GET /task/{id}).
func (t *Timeline) SetQueue(q []QueuedMessage) {
	t.queue = append([]QueuedMessage(nil), q...)
	for i, m := range t.queue {
		if m.Text == "" {
			t.queue[i].Text = t.sent[m.ID]
		}
	}
	t.version++
}

// NoteSent records the daemon's reply to our own POST …/message: the text
// we sent is remembered for the id, and a queued message shows in the queue
// at once (unless the stream already reported it consumed).
func (t *Timeline) NoteSent(id, text string, queued bool) {
	if id == "" {
		return // an older daemon's empty reply: the stream will tell
	}
	t.sent[id] = text
	if queued {
		t.enqueue(QueuedMessage{ID: id, Text: text})
	} else {
		for i := range t.queue {
			if t.queue[i].ID == id && t.queue[i].Text == "" {
				t.queue[i].Text = text
			}
		}
	}
	t.version++
}

// NoteCancelled records the reply to our own POST …/cancel: the run is over,
// unfinished calls are cancelled, and the returned messages leave the queue
// (the caller gives their text back to the user).
func (t *Timeline) NoteCancelled(pending []QueuedMessage) {
	for _, p := range pending {
		t.unqueued.Add(p.ID)
		t.dequeue(p.ID)
	}
	t.endRunningTools(ToolCancelled)
	t.runEnded()
	t.markBoundary()
	t.version++
}
