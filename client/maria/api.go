package maria

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/jsonx"
)

// Tasks lists every task the daemon knows (GET /tasks), stopped ones included.
func (c *Client) Tasks(ctx context.Context) ([]events.Task, error) {
	u := c.endpoint("tasks")
	data, err := c.do(ctx, http.MethodGet, u, callTimeout, nil)
	if err != nil {
		return nil, err
	}
	tasks, err := ParseTasks(data)
	if err != nil {
		return nil, decodeError(http.MethodGet, u, data, err)
	}
	return tasks, nil
}

// Task fetches one task (GET /task/{id}); the daemon syncs a running task's
// status and queue first.
func (c *Client) Task(ctx context.Context, id string) (events.Task, error) {
	u := c.endpoint("task", id)
	data, err := c.do(ctx, http.MethodGet, u, callTimeout, nil)
	if err != nil {
		return events.Task{}, err
	}
	var w struct {
		Task json.RawMessage `json:"task"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return events.Task{}, decodeError(http.MethodGet, u, data, err)
	}
	if len(w.Task) == 0 {
		return events.Task{}, decodeError(http.MethodGet, u, data, errors.New(`no "task" field`))
	}
	t, err := ParseTask(w.Task)
	if err != nil {
		return events.Task{}, decodeError(http.MethodGet, u, data, err)
	}
	return t, nil
}

// AmbiguousTaskError: several task ids start with Query.
type AmbiguousTaskError struct {
	Query      string
	Candidates []events.Task
}

func (e *AmbiguousTaskError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q matches %d tasks:", e.Query, len(e.Candidates))
	for i, t := range e.Candidates {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte(' ')
		b.WriteString(shortID(t.ID))
		name := oneLine(t.Name)
		if name == "" {
			name = "unnamed"
		}
		if r := []rune(name); len(r) > 40 {
			name = string(r[:39]) + "…"
		}
		fmt.Fprintf(&b, " (%s)", name)
	}
	b.WriteString("; give more of the id")
	return b.String()
}
func (e *AmbiguousTaskError) Is(target error) bool { return target == client.ErrAmbiguousTask }

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// ResolveTask finds a task by its exact id or a unique id prefix (case
// insensitive), using the task list. Errors: *client.NoTaskError
// (client.ErrNoTask), *AmbiguousTaskError (client.ErrAmbiguousTask), or
// the Tasks error.
func (c *Client) ResolveTask(ctx context.Context, idOrPrefix string) (events.Task, error) {
	q := strings.TrimSpace(idOrPrefix)
	if q == "" {
		return events.Task{}, &client.NoTaskError{Query: idOrPrefix}
	}
	tasks, err := c.Tasks(ctx)
	if err != nil {
		return events.Task{}, err
	}
	lq := strings.ToLower(q)
	var matches []events.Task
	for _, t := range tasks {
		lid := strings.ToLower(t.ID)
		if lid == lq {
			return t, nil
		}
		if strings.HasPrefix(lid, lq) {
			matches = append(matches, t)
		}
	}
	switch len(matches) {
	case 0:
		return events.Task{}, &client.NoTaskError{Query: q}
	case 1:
		return matches[0], nil
	}
	sort.SliceStable(matches, func(i, j int) bool { return matches[i].ID < matches[j].ID })
	return events.Task{}, &AmbiguousTaskError{Query: q, Candidates: matches}
}

// CreateTaskRequest is POST /task. Empty fields are left out, so the daemon
// picks its defaults (model, a temporary cwd).
type CreateTaskRequest struct {
	Name      string
	Model     string
	Cwd       string
	Message   string
	WebSearch bool
}

// CreateTaskResult is the daemon's 201 answer. MessageID and Queued are set
// only when a Message was sent.
type CreateTaskResult struct {
	Task      events.Task
	MessageID string
	Queued    bool
}

type wireMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// CreateTask starts a task. It can take minutes: the daemon spawns the task
// process and waits for it to register before answering.
func (c *Client) CreateTask(ctx context.Context, r CreateTaskRequest) (CreateTaskResult, error) {
	body := struct {
		Name      string       `json:"name,omitempty"`
		Model     string       `json:"model,omitempty"`
		Message   *wireMessage `json:"message,omitempty"`
		Cwd       string       `json:"cwd,omitempty"`
		WebSearch bool         `json:"web_search,omitempty"`
	}{Name: r.Name, Model: r.Model, Cwd: r.Cwd, WebSearch: r.WebSearch}
	if r.Message != "" {
		body.Message = &wireMessage{Role: "user", Content: r.Message}
	}
	u := c.endpoint("task")
	data, err := c.do(ctx, http.MethodPost, u, createTaskTimeout, body)
	if err != nil {
		return CreateTaskResult{}, err
	}
	var w struct {
		Task    json.RawMessage `json:"task"`
		Message *struct {
			ID     json.RawMessage `json:"id"`
			Queued bool            `json:"queued"`
		} `json:"message"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return CreateTaskResult{}, decodeError(http.MethodPost, u, data, err)
	}
	if len(w.Task) == 0 {
		return CreateTaskResult{}, decodeError(http.MethodPost, u, data, errors.New(`no "task" field`))
	}
	t, err := ParseTask(w.Task)
	if err != nil {
		return CreateTaskResult{}, decodeError(http.MethodPost, u, data, err)
	}
	res := CreateTaskResult{Task: t}
	if w.Message != nil {
		res.MessageID = jsonx.ID(w.Message.ID)
		res.Queued = w.Message.Queued
	}
	return res, nil
}

// SendResult is the answer to Send: the message id (as later seen in
// MessageQueued/MessageUnqueued) and whether it waits behind a running turn.
type SendResult struct {
	ID     string
	Queued bool
}

// Send posts a user message to a task. Older daemons answer 200 with an
// empty body; that is SendResult{} and no error.
func (c *Client) Send(ctx context.Context, taskID, text string, webSearch bool) (SendResult, error) {
	body := struct {
		Message   wireMessage `json:"message"`
		WebSearch bool        `json:"web_search"`
	}{Message: wireMessage{Role: "user", Content: text}, WebSearch: webSearch}
	u := c.endpoint("task", taskID, "message")
	data, err := c.do(ctx, http.MethodPost, u, callTimeout, body)
	if err != nil {
		return SendResult{}, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return SendResult{}, nil
	}
	var w struct {
		ID     json.RawMessage `json:"id"`
		Queued bool            `json:"queued"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return SendResult{}, decodeError(http.MethodPost, u, data, err)
	}
	return SendResult{ID: jsonx.ID(w.ID), Queued: w.Queued}, nil
}

// Cancel stops a task's run and returns the queued messages the daemon
// dropped. When nothing runs, the error satisfies errors.Is(err,
// client.ErrNotRunning) and nothing is returned.
func (c *Client) Cancel(ctx context.Context, taskID string) ([]events.QueuedMessage, error) {
	u := c.endpoint("task", taskID, "cancel")
	data, err := c.do(ctx, http.MethodPost, u, callTimeout, nil)
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusNotFound && isNotRunningMessage(ae.Message) {
			return nil, notRunningError{ae}
		}
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var w struct {
		Pending json.RawMessage `json:"pending_messages"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, decodeError(http.MethodPost, u, data, err)
	}
	if len(w.Pending) == 0 || string(w.Pending) == "null" {
		return nil, nil
	}
	q, err := ParseQueuedMessages(w.Pending)
	if err != nil {
		return nil, decodeError(http.MethodPost, u, data, err)
	}
	return q, nil
}

// isNotRunningMessage recognizes the task server's cancel 404 ("No running
// task to cancel."; its README says "No ongoing task"), as opposed to the
// daemon's "Task not found".
func isNotRunningMessage(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "no running task") || strings.Contains(m, "no ongoing task")
}

// QueuedMessages lists the messages waiting in a task's queue.
func (c *Client) QueuedMessages(ctx context.Context, taskID string) ([]events.QueuedMessage, error) {
	u := c.endpoint("task", taskID, "queued-messages")
	data, err := c.do(ctx, http.MethodGet, u, callTimeout, nil)
	if err != nil {
		return nil, err
	}
	q, err := ParseQueuedMessages(data)
	if err != nil {
		return nil, decodeError(http.MethodGet, u, data, err)
	}
	return q, nil
}

// Models lists the model names configured in the daemon's models.json
// (built-in provider names are accepted by CreateTask but not listed).
func (c *Client) Models(ctx context.Context) ([]string, error) {
	u := c.endpoint("models")
	data, err := c.do(ctx, http.MethodGet, u, callTimeout, nil)
	if err != nil {
		return nil, err
	}
	var w struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, decodeError(http.MethodGet, u, data, err)
	}
	names := make([]string, 0, len(w.Models))
	for _, m := range w.Models {
		if m.Name != "" {
			names = append(names, m.Name)
		}
	}
	return names, nil
}

// Status asks a task server for its run status: "idle" or "generating".
// Note the daemon resumes a stopped task to answer it; don't poll this.
func (c *Client) Status(ctx context.Context, taskID string) (string, error) {
	u := c.endpoint("task", taskID, "status")
	data, err := c.do(ctx, http.MethodGet, u, callTimeout, nil)
	if err != nil {
		return "", err
	}
	var w struct {
		Status *string `json:"status"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return "", decodeError(http.MethodGet, u, data, err)
	}
	if w.Status == nil {
		return "", decodeError(http.MethodGet, u, data, errors.New(`no "status" field`))
	}
	return *w.Status, nil
}
