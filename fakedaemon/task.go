package fakedaemon

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
)

const (
	statusIdle       = "idle"
	statusGenerating = "generating"
	statusStopped    = "stopped"

	eventMaria    = "maria"
	eventSnapshot = "maria.queued_messages.synchronized"
)

// task is one emulated task: the daemon's record plus the state of its
// (imaginary) task-server process and agent.
type task struct {
	id        string
	cwd       string
	name      string
	hasName   bool
	model     string
	port      int
	webSearch bool
	created   int64
	updated   int64
	status    string

	rng *rand.Rand    // event, message and tool-call ids: per task, so concurrent tasks stay reproducible
	log *feed[[]byte] // the daemon's per-task log of whole SSE frames
	// procStart is the log index where the current task-server process
	// began streaming (for the forwarded task-server /v1/events).
	procStart int
	started   bool // this process has emitted ModelLoaded/SystemPromptSet/ToolAdded

	queue     []queued
	run       *run // nil when idle
	persisted []persistedEvent
	received  []string
	disabled  map[string]bool
	prompt    *string

	// Scripted-agent state.
	promptTokens int
	replies      int
	todos        []todo

	// Docs dialect: integer ids and the alternating shapes.
	docsN, docsUser, docsAsst int
}

// run is one agent run (PreConversation … PostConversation/Cancelled/Failed).
type run struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// persistedEvent is an event as it would be saved in the conversation file:
// replayed verbatim (same id) when a stopped task is resumed.
type persistedEvent struct {
	msg   string
	frame []byte
}

// queued is a message waiting in the agent's pending queue.
type queued struct {
	id        string
	role      string
	parts     []string
	webSearch bool
}

func (q queued) text() string { return strings.Join(q.parts, "") }

// param is the message param as the server serializes it (§8.1): a string
// for exactly one text part, else an array of parts.
func (q queued) param() obj {
	m := o("role", q.role)
	switch len(q.parts) {
	case 0:
	case 1:
		m = m.with("content", q.parts[0])
	default:
		ps := make([]obj, 0, len(q.parts))
		for _, p := range q.parts {
			ps = append(ps, o("type", "text", "text", p))
		}
		m = m.with("content", ps)
	}
	return m
}

func (t *task) uuid() string { return uuidFrom(t.rng) }

// json is the daemon's Task JSON (§8.5).
func (t *task) json() obj {
	if t.status == statusStopped {
		m := obj{}
		if t.hasName {
			m = m.with("name", t.name)
		}
		return m.with("id", t.id, "cwd", t.cwd, "status", t.status, "created", t.created, "updated", t.updated, "web_search", t.webSearch)
	}
	qs := make([]obj, 0, len(t.queue))
	for _, q := range t.queue {
		qs = append(qs, o("id", q.id, "message", q.param()))
	}
	m := o("id", t.id, "cwd", t.cwd, "port", t.port, "status", t.status, "created", t.created, "updated", t.updated,
		"web_search", t.webSearch, "queued_messages", qs, "model", t.model)
	if t.hasName {
		m = m.with("name", t.name)
	}
	return m
}

// snapshotJSON is a maria.queued_messages.synchronized payload.
func snapshotJSON(qs []queued) []byte {
	out := make([]obj, 0, len(qs))
	for _, q := range qs {
		out = append(out, o("id", q.id, "message", q.param(), "web_search", q.webSearch))
	}
	return mustJSON(out)
}

// ---- emitting (all with d.mu held) ----

// emit appends one maria event, now, to the task's log.
func (d *Daemon) emit(t *task, msg string, fields obj) {
	d.emitAt(t, d.nowMS(), msg, fields)
}

func (d *Daemon) emitAt(t *task, created int64, msg string, fields obj) {
	var data []byte
	if d.dialect == DialectDocs {
		data = mustJSON(d.docsEvent(t, msg, fields))
	} else {
		data = mustJSON(o("id", t.uuid(), "created", created, "desc", append(o("msg", msg), fields...)))
	}
	f := frame(eventMaria, data)
	t.log.append(f)
	// ModelLoaded and Cancelled/Failed are made by the process, never saved
	// to the conversation (§6.2).
	if msg != "ModelLoaded" && msg != "Cancelled" && msg != "Failed" {
		t.persisted = append(t.persisted, persistedEvent{msg: msg, frame: f})
	}
}

// lookup returns a field's value.
func (m obj) lookup(k string) any {
	for _, f := range m {
		if f.k == k {
			return f.v
		}
	}
	return nil
}

// docsEvent maps a HEAD variant onto the flat docs dialect (docs/protocol.md §6.1).
func (d *Daemon) docsEvent(t *task, msg string, fields obj) obj {
	t.docsN++
	head := o("id", t.docsN)
	switch msg {
	case "UserMessage":
		text, _ := fields.lookup("content").(string)
		var content any
		switch t.docsUser % 3 {
		case 0:
			content = text
		case 1:
			content = []obj{o("type", "text", "text", text)}
		default:
			content = []obj{o("text", text)}
		}
		t.docsUser++
		return head.with("msg", "MessageAdded", "message", o("role", "user", "content", content))
	case "AssistantMessage":
		var usage any
		u := fields.lookup("usage")
		switch t.docsAsst % 3 {
		case 0:
			usage = []any{u}
		case 1:
			usage = nil
		default:
			usage = u
		}
		t.docsAsst++
		return head.with("msg", "RequestCompleted", "usage", usage,
			"message", o("role", "assistant", "content", fields.lookup("content"), "tool_calls", fields.lookup("tool_calls")))
	}
	return append(head.with("msg", msg), fields...)
}

func (d *Daemon) snapshot(t *task, qs []queued) {
	t.log.append(frame(eventSnapshot, snapshotJSON(qs)))
}

// setStatus records a run-state transition and the daemon.task.changed
// event that goes with it.
func (d *Daemon) setStatus(t *task, status string) {
	t.status = status
	d.events.append(daemonEvent{name: "daemon.task.changed", taskID: t.id})
}

// intro emits what a fresh task-server process emits at construction; it
// reaches the stream at the process's first run (§5.5).
func (d *Daemon) intro(t *task) {
	d.emit(t, "ModelLoaded", o("name", t.model))
	d.emit(t, "SystemPromptSet", o("prompt", systemPrompt))
	for _, td := range toolDefs() {
		d.emit(t, "ToolAdded", o("tool", td))
	}
	t.started = true
}

// ---- task lifecycle ----

// createParams is a parsed create request.
type createParams struct {
	name      string
	hasName   bool
	model     string
	cwd       string
	msg       *queued
	webSearch bool
}

// newTaskLocked registers a task. d.mu must be held.
func (d *Daemon) newTaskLocked(cwd, name string, hasName bool, model string, webSearch bool) *task {
	d.ordinal++
	t := &task{
		id:        uuidFrom(d.rng),
		cwd:       cwd,
		name:      name,
		hasName:   hasName,
		model:     model,
		port:      40000 + d.rng.IntN(20000),
		webSearch: webSearch,
		created:   d.nowMS(),
		status:    statusIdle,
		rng:       rand.New(rand.NewPCG(uint64(d.seed), d.ordinal)),
		log:       newFeed[[]byte](),
	}
	t.updated = t.created
	d.tasks[t.id] = t
	d.order = append(d.order, t)
	return t
}

// tempDir creates a directory that Close removes.
func (d *Daemon) tempDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", fmt.Errorf("fakedaemon: create temp dir: %w", err)
	}
	d.mu.Lock()
	d.tempDirs = append(d.tempDirs, dir)
	d.mu.Unlock()
	return dir, nil
}

// cwdBusy reports whether a task with a process already owns cwd (an exact
// string match, as the daemon does not normalise paths).
func (d *Daemon) cwdBusy(cwd string, except *task) bool {
	for _, o := range d.order {
		if o != except && o.cwd == cwd && o.status != statusStopped {
			return true
		}
	}
	return false
}

// create is the one code path behind POST /v1/task and CreateTask. It
// returns the task JSON as read before the first message is sent (so status
// is "idle", as the real daemon usually reports) and the message reply.
func (d *Daemon) create(p createParams) (*task, obj, obj, error) {
	model, err := d.resolveModel(p.model)
	if err != nil {
		return nil, nil, nil, err
	}
	cwd := p.cwd
	if cwd == "" {
		if cwd, err = d.tempDir("maria-server-task-"); err != nil {
			return nil, nil, nil, &apiError{status: http.StatusInternalServerError,
				body: daemonError("Failed to create temporary working directory: "+err.Error(), nil), msg: err.Error()}
		}
	} else if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return nil, nil, nil, &apiError{status: http.StatusNotFound,
			body: daemonError("Specified 'cwd' path does not exist: "+cwd, o("cwd", cwd)), msg: "cwd does not exist: " + cwd}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, nil, nil, &apiError{status: http.StatusServiceUnavailable, body: daemonError("Daemon is shutting down", nil), msg: "closed"}
	}
	if d.cwdBusy(cwd, nil) {
		return nil, nil, nil, &apiError{status: http.StatusConflict,
			body: daemonError("A running task already exists for the specified 'cwd': "+cwd, o("cwd", cwd)), msg: "cwd busy: " + cwd}
	}
	t := d.newTaskLocked(cwd, p.name, p.hasName, model, p.webSearch)
	// The daemon's subscription to the new process starts with its snapshot.
	d.snapshot(t, nil)
	taskJSON := t.json()
	var reply obj
	if p.msg != nil {
		m := *p.msg
		m.webSearch = p.webSearch
		reply = d.postLocked(t, m)
	}
	return t, taskJSON, reply, nil
}

// postLocked accepts a message (POST …/message): it starts a run when the
// task is idle, else queues the message for the running one.
func (d *Daemon) postLocked(t *task, m queued) obj {
	m.id = t.uuid()
	t.received = append(t.received, m.text())
	if !t.started {
		d.intro(t)
	}
	t.queue = append(t.queue, m)
	d.emit(t, "MessageQueued", o("message", o("id", m.id)))
	if t.run != nil {
		d.snapshot(t, t.queue)
		return o("id", m.id, "queued", true)
	}
	// The snapshot written after the first MessageQueued of a run is already
	// the queue after its consumption (usually []), §5.4.
	d.snapshot(t, t.queue[1:])
	ctx, cancel := context.WithCancel(d.ctx)
	r := &run{ctx: ctx, cancel: cancel}
	t.run = r
	d.emit(t, "PreConversation", nil)
	d.setStatus(t, statusGenerating)
	first := d.consumeLocked(t)
	d.wg.Add(1)
	go d.agent(t, r, first)
	return o("id", m.id, "queued", false)
}

// consumeLocked takes the next queued message into the conversation.
func (d *Daemon) consumeLocked(t *task) queued {
	m := t.queue[0]
	t.queue = t.queue[1:]
	d.emit(t, "MessageUnqueued", o("message", o("id", m.id)))
	d.snapshot(t, t.queue)
	d.emit(t, "UserMessage", o("content", m.text()))
	return m
}

// cancelLocked is POST …/cancel.
func (d *Daemon) cancelLocked(t *task) (obj, error) {
	if t.run == nil {
		return nil, &apiError{status: http.StatusNotFound, body: daemonError("No running task to cancel.", nil), msg: "not running"}
	}
	t.run.cancel()
	t.run = nil
	d.emit(t, "Cancelled", nil)
	pending := t.queue
	t.queue = nil
	out := make([]obj, 0, len(pending))
	for _, q := range pending {
		out = append(out, o("id", q.id, "message", q.param(), "web_search", q.webSearch))
		d.emit(t, "MessageUnqueued", o("message", o("id", q.id)))
		d.snapshot(t, nil)
	}
	d.setStatus(t, statusIdle)
	return o("pending_messages", out), nil
}

// resumeLocked turns a stopped task back into a running (idle) one, the way
// any forwarded request does (§3.9, §5.2).
func (d *Daemon) resumeLocked(t *task) error {
	if st, err := os.Stat(t.cwd); err != nil || !st.IsDir() {
		return &apiError{status: http.StatusNotFound,
			body: daemonError("Cannot resume conversation: working directory has been removed", o("cwd", t.cwd, "task_id", t.id)),
			msg:  "cwd removed"}
	}
	if d.cwdBusy(t.cwd, t) {
		return &apiError{status: http.StatusConflict, noContentType: true,
			body: daemonError("A running task already exists for the specified 'cwd': "+t.cwd, o("cwd", t.cwd)), msg: "cwd busy"}
	}
	t.status = statusIdle
	t.model = d.model
	t.webSearch = false
	t.port = 40000 + d.rng.IntN(20000)
	t.hasName = true
	t.procStart = t.log.len()
	d.snapshot(t, nil)
	d.emit(t, "ModelLoaded", o("name", t.model))
	// The resumed agent replays its history with the ids unchanged; the live
	// stream drops TokenCounted and ContextPruned.
	for _, e := range t.persisted {
		if e.msg != "TokenCounted" && e.msg != "ContextPruned" {
			t.log.append(e.frame)
		}
	}
	d.emit(t, "SystemPromptSet", o("prompt", systemPrompt))
	for _, td := range toolDefs() {
		d.emit(t, "ToolAdded", o("tool", td))
	}
	t.started = true
	return nil
}

// lookupTask validates an id from a URL and finds its task (d.mu held).
func (d *Daemon) lookupTask(id string) (*task, error) {
	if !validUUID(id) {
		return nil, invalidUUID(id)
	}
	t := d.tasks[strings.ToLower(id)]
	if t == nil {
		return nil, notFoundTask(id)
	}
	return t, nil
}

// ---- public Go API ----

// CreateRequest is a task to create through CreateTask.
type CreateRequest struct {
	Name, Model, Cwd, Message string
	WebSearch                 bool
}

// CreateTask creates a task through the same code path as POST /v1/task.
// Empty fields count as absent.
func (d *Daemon) CreateTask(req CreateRequest) (string, error) {
	p := createParams{name: req.Name, hasName: req.Name != "", model: req.Model, cwd: req.Cwd, webSearch: req.WebSearch}
	if req.Message != "" {
		p.msg = &queued{role: "user", parts: []string{req.Message}}
	}
	t, _, _, err := d.create(p)
	if err != nil {
		return "", err
	}
	return t.id, nil
}

// Received returns the text of every message posted to the task (including
// the one it was created with), in order.
func (d *Daemon) Received(taskID string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.tasks[strings.ToLower(taskID)]
	if t == nil {
		return nil
	}
	return append([]string(nil), t.received...)
}
