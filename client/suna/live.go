package suna

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// Live is the live Suna backend: threads are sessions, a thread's agent
// runs are followed one after another. See docs/live/suna.md.
type Live struct {
	api *api
	t   tuning

	mu    sync.Mutex
	pokes map[string]chan struct{} // followers waiting for a thread's next run
}

// tuning holds the timings (tests shorten them).
type tuning struct {
	// poll is how long the stream may stay quiet (pings only) before the
	// run's status is asked, and how often an idle thread is asked for a
	// new run.
	poll time.Duration
	// retry and retryMax pace reconnects and reloads.
	retry, retryMax time.Duration
}

var defaultTuning = tuning{poll: 2 * time.Second, retry: 500 * time.Millisecond, retryMax: 10 * time.Second}

// Config is the configuration Open takes (client.Config).
type Config = client.Config

// Open returns the live backend for the Suna API at cfg.URL (the API
// base, like http://localhost:8000/v1). It makes no request.
func Open(cfg client.Config) (client.Backend, error) {
	return open(cfg, defaultTuning)
}

func open(cfg client.Config, t tuning) (*Live, error) {
	a, err := newAPI(cfg)
	if err != nil {
		return nil, err
	}
	return &Live{api: a, t: t, pokes: map[string]chan struct{}{}}, nil
}

// Probe reports whether cfg.URL answers as a Suna API: its health route
// answers {"status": "ok", "instance_id": …} (no token needed).
func Probe(ctx context.Context, cfg client.Config) error {
	a, err := newAPI(client.Config{URL: cfg.URL, Client: cfg.Client, Header: cfg.Header}) // the health route wants no token
	if err != nil {
		return err
	}
	var h map[string]json.RawMessage
	u := a.endpoint("health")
	if err := a.get(ctx, u, &h); err != nil {
		return fmt.Errorf("not a Suna API: %w", err)
	}
	var status string
	_ = json.Unmarshal(h["status"], &status)
	if _, ok := h["instance_id"]; !ok || status == "" {
		return fmt.Errorf("not a Suna API: GET %s answers without Suna's status and instance_id", u)
	}
	return nil
}

func (l *Live) Name() string { return client.Suna }

func (l *Live) URL() string { return l.api.base }

func (l *Live) Capabilities() client.Capabilities {
	// Suna's usage carries tokens, not a cost; it has no queue of its own.
	return client.Capabilities{Create: true, Send: true, Cancel: true}
}

// wire shapes of the REST answers.
type wireThread struct {
	ThreadID  string `json:"thread_id"`
	ProjectID string `json:"project_id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	Project   *struct {
		Name string `json:"name"`
	} `json:"project"`
}

type wireRun struct {
	ID          string `json:"id"`
	ThreadID    string `json:"thread_id"`
	Status      string `json:"status"`
	StartedAt   string `json:"started_at"`
	CompletedAt string `json:"completed_at"`
	Error       string `json:"error"`
}

func (r *wireRun) UnmarshalJSON(b []byte) error {
	// Older routes answer in camelCase (threadId, startedAt); error may be
	// null or an object.
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			var s string
			if json.Unmarshal(m[k], &s) == nil && s != "" {
				return s
			}
		}
		return ""
	}
	*r = wireRun{ID: str("id", "agent_run_id"), ThreadID: str("thread_id", "threadId"), Status: str("status"),
		StartedAt: str("started_at", "startedAt"), CompletedAt: str("completed_at", "completedAt"), Error: str("error")}
	return nil
}

func (r *wireRun) running() bool { return r != nil && r.Status == "running" }

func (l *Live) threads(ctx context.Context) ([]wireThread, error) {
	var body struct {
		Threads []wireThread `json:"threads"`
	}
	if err := l.api.get(ctx, l.api.endpoint("threads")+"?page=1&limit=200", &body); err != nil {
		return nil, err
	}
	return body.Threads, nil
}

func (l *Live) active(ctx context.Context) (map[string]bool, error) {
	var body struct {
		Runs []wireRun `json:"active_runs"`
	}
	if err := l.api.get(ctx, l.api.endpoint("agent-runs", "active"), &body); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, r := range body.Runs {
		if r.running() {
			out[r.ThreadID] = true
		}
	}
	return out, nil
}

// runs lists a thread's agent runs, newest first.
func (l *Live) runs(ctx context.Context, threadID string) ([]wireRun, error) {
	var body struct {
		Runs []wireRun `json:"agent_runs"`
	}
	if err := l.api.get(ctx, l.api.endpoint("thread", threadID, "agent-runs"), &body); err != nil {
		return nil, err
	}
	return body.Runs, nil
}

func (l *Live) runStatus(ctx context.Context, runID string) (wireRun, error) {
	var r wireRun
	err := l.api.get(ctx, l.api.endpoint("agent-run", runID), &r)
	return r, err
}

func task(t wireThread, running bool) events.Task {
	name := t.Name
	if name == "" && t.Project != nil {
		name = t.Project.Name
	}
	st := events.StatusIdle
	if running {
		st = events.StatusGenerating
	}
	created, _ := parseTime(t.CreatedAt)
	updated, _ := parseTime(t.UpdatedAt)
	return events.Task{ID: t.ThreadID, Name: name, Status: st, Created: created, Updated: updated}
}

// Sessions lists the threads (newest activity first, as the API sorts
// them), each generating when it has a running agent run.
func (l *Live) Sessions(ctx context.Context) ([]events.Task, error) {
	// The two lists are asked at once: neither needs the other.
	type actives struct {
		m   map[string]bool
		err error
	}
	ach := make(chan actives, 1)
	go func() {
		m, err := l.active(ctx)
		ach <- actives{m, err}
	}()
	ts, err := l.threads(ctx)
	a := <-ach
	if err != nil {
		return nil, err
	}
	act, err := a.m, a.err
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		// A server without the route: every thread's own runs say it.
		act, err = map[string]bool{}, nil
		for _, t := range ts {
			if runs, rerr := l.runs(ctx, t.ThreadID); rerr == nil && len(runs) > 0 && runs[0].running() {
				act[t.ThreadID] = true
			}
		}
	}
	if err != nil {
		return nil, err
	}
	out := make([]events.Task, 0, len(ts))
	for _, t := range ts {
		out = append(out, task(t, act[t.ThreadID]))
	}
	return out, nil
}

// Session finds a thread by id or unambiguous prefix.
func (l *Live) Session(ctx context.Context, idOrPrefix string) (events.Task, error) {
	ts, err := l.Sessions(ctx)
	if err != nil {
		return events.Task{}, err
	}
	matches := client.Match(ts, idOrPrefix)
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		// Not in the first page of the list: ask for the thread itself.
		if runs, err := l.runs(ctx, idOrPrefix); err == nil {
			t := events.Task{ID: idOrPrefix, Status: events.StatusIdle}
			if len(runs) > 0 && runs[0].running() {
				t.Status = events.StatusGenerating
			}
			return t, nil
		}
		return events.Task{}, &client.NoTaskError{Query: idOrPrefix}
	}
	ids := make([]string, len(matches))
	for i, m := range matches {
		ids[i] = m.ID
	}
	return events.Task{}, fmt.Errorf("%q matches %d threads (%s): give more of the id: %w",
		idOrPrefix, len(matches), strings.Join(ids, ", "), client.ErrAmbiguousTask)
}

// Send starts a run on an idle thread with the message as its prompt; a
// running thread answers ErrBusy (Suna has no queue: perch holds it).
func (l *Live) Send(ctx context.Context, sessionID string, m client.Message) (client.SendResult, error) {
	runs, err := l.runs(ctx, sessionID)
	if err != nil {
		return client.SendResult{}, classify(err)
	}
	if len(runs) > 0 && runs[0].running() {
		return client.SendResult{}, fmt.Errorf("thread %s: agent run %s is running: %w", sessionID, runs[0].ID, client.ErrBusy)
	}
	var res struct {
		ThreadID string `json:"thread_id"`
		RunID    string `json:"agent_run_id"`
	}
	err = l.api.postForm(ctx, l.api.endpoint("agent", "start"), [][2]string{{"thread_id", sessionID}, {"prompt", m.Text}}, &res)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusPaymentRequired && isRunLimit(ae.Message) {
		// The run limit: a run started meanwhile.
		return client.SendResult{}, fmt.Errorf("thread %s: %s: %w", sessionID, ae.Message, client.ErrBusy)
	}
	if err != nil {
		return client.SendResult{}, classify(err)
	}
	l.poke(sessionID)
	return client.SendResult{ID: res.RunID}, nil
}

// isRunLimit: a 402 that is the parallel-run limit (a run is going), not
// a billing refusal.
func isRunLimit(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "parallel") || strings.Contains(m, "concurren") || strings.Contains(m, "running")
}

// classify marks an error for the outbox: a refusal (4xx but 408/429) is
// permanent; a request that never reached the server may be retried.
func classify(err error) error {
	var ae *APIError
	if errors.As(err, &ae) && ae.Status/100 == 4 && ae.Status != 408 && ae.Status != 429 {
		return client.Permanent(err)
	}
	return err
}

// Cancel stops the thread's running agent run. Suna keeps no queue, so
// nothing comes back.
func (l *Live) Cancel(ctx context.Context, sessionID string) ([]events.QueuedMessage, error) {
	runs, err := l.runs(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 || !runs[0].running() {
		return nil, fmt.Errorf("thread %s has no running agent run: %w", sessionID, client.ErrNotRunning)
	}
	if err := l.api.do(ctx, http.MethodPost, l.api.endpoint("agent-run", runs[0].ID, "stop"), nil, "", nil); err != nil {
		return nil, err
	}
	return nil, nil
}

// Create starts a thread with a first run (POST /agent/start without a
// thread id).
func (l *Live) Create(ctx context.Context, r client.CreateRequest) (events.Task, error) {
	fields := [][2]string{{"prompt", r.Prompt}}
	if r.Model != "" {
		fields = append(fields, [2]string{"model_name", r.Model})
	}
	var res struct {
		ThreadID string `json:"thread_id"`
	}
	if err := l.api.postForm(ctx, l.api.endpoint("agent", "start"), fields, &res); err != nil {
		return events.Task{}, err
	}
	if res.ThreadID == "" {
		return events.Task{}, fmt.Errorf("POST %s: the answer names no thread", l.api.endpoint("agent", "start"))
	}
	return events.Task{ID: res.ThreadID, Name: r.Name, Status: events.StatusGenerating, Model: r.Model}, nil
}

// poke wakes a follower of the thread waiting for its next run.
func (l *Live) poke(threadID string) {
	l.mu.Lock()
	ch := l.pokes[threadID]
	l.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (l *Live) pokeChan(threadID string) (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	l.mu.Lock()
	l.pokes[threadID] = ch
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		if l.pokes[threadID] == ch {
			delete(l.pokes, threadID)
		}
		l.mu.Unlock()
	}
}

// streamURL is a run's stream with the token and the resume point.
func (l *Live) streamURL(runID, lastID string) string {
	q := url.Values{}
	if l.api.token != "" {
		q.Set("token", l.api.token)
	}
	if lastID != "" {
		q.Set("last_id", lastID)
	}
	u := l.api.endpoint("agent-run", runID, "stream")
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}
