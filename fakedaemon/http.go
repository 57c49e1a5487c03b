package fakedaemon

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// maxBody bounds request bodies; maria reads them fully, and nothing a
// client sends is anywhere near this.
const maxBody = 16 << 20

// Handler serves the daemon's routes (everything under /v1, §3).
func (d *Daemon) Handler() http.Handler { return http.HandlerFunc(d.serveHTTP) }

func (d *Daemon) serveHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "*")
	h.Set("Access-Control-Allow-Headers", "*")
	// The daemon matches on the raw request target: a query string or a
	// trailing slash is part of the last segment (§2).
	raw := r.RequestURI
	if !strings.HasPrefix(raw, "/") {
		raw = r.URL.RequestURI()
	}
	if d.logf != nil {
		d.logf("fakedaemon: %s %s", r.Method, raw)
	}
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	p := strings.Split(raw, "/")[1:]
	get, post := r.Method == http.MethodGet, r.Method == http.MethodPost
	isTask := len(p) >= 3 && p[0] == "v1" && p[1] == "task"
	switch {
	case get && raw == "/":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "<h1>404 Not Found</h1>")
	case get && match(p, "v1", "events"):
		d.serveDaemonEvents(w, r)
	case get && match(p, "v1", "models"):
		ms := make([]obj, 0, 4)
		for _, m := range d.models() {
			ms = append(ms, o("name", m))
		}
		writeJSON(w, http.StatusOK, mustJSON(o("models", ms)))
	case post && match(p, "v1", "task", "register"):
		// Only the daemon's own task servers may register; the fake spawns none.
		writeJSON(w, http.StatusBadRequest, mustJSON("Invalid JSON in request body: unknown register id"))
	case get && match(p, "v1", "tasks"):
		d.mu.Lock()
		ts := d.taskListLocked()
		d.mu.Unlock()
		writeJSON(w, http.StatusOK, mustJSON(o("tasks", ts)))
	case post && match(p, "v1", "task"):
		d.serveCreate(w, r)
	case get && isTask && len(p) == 3:
		d.mu.Lock()
		t, err := d.lookupTask(p[2])
		var body []byte
		if err == nil {
			body = mustJSON(o("task", t.json()))
		}
		d.mu.Unlock()
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, body)
	case get && isTask && len(p) == 4 && p[3] == "events":
		d.serveTaskEvents(w, r, p[2])
	case isTask:
		d.serveForward(w, r, p[2], strings.Join(p[3:], "/"))
	case get && match(p, "v1", "auth", "status"):
		writeJSON(w, http.StatusOK, mustJSON(o("codex", o("authenticated", false), "copilot", o("authenticated", false))))
	case post && match(p, "v1", "auth", "codex", "start"):
		writeJSON(w, http.StatusOK, mustJSON(o("auth_url", "https://auth.openai.com/oauth/authorize?client_id=fake", "state", uuidFromLocked(d))))
	case post && match(p, "v1", "auth", "copilot", "start"):
		writeJSON(w, http.StatusOK, mustJSON(o("user_code", "FAKE-0000", "verification_uri", "https://github.com/login/device", "expires_in", 900, "interval", 5)))
	case post && (match(p, "v1", "auth", "codex", "logout") || match(p, "v1", "auth", "copilot", "logout")):
		d.events.append(daemonEvent{name: "auth.status.changed", data: mustJSON(o("provider", p[2], "authenticated", false))})
		writeJSON(w, http.StatusOK, []byte(`{"success": true}`))
	case post && match(p, "v1", "shutdown"):
		writeJSON(w, http.StatusOK, []byte(`{}`))
		d.shutdownOnce.Do(func() { close(d.shutdown) })
	case get:
		// Static-file lookup under --serve finds nothing; the path is shown
		// without its leading slash.
		writeJSON(w, http.StatusNotFound, daemonError("Unknown endpoint: "+raw[1:], o("method", r.Method, "path", raw[1:])))
	default:
		writeJSON(w, http.StatusNotFound, daemonError("Unknown endpoint: "+raw, o("method", r.Method, "path", raw)))
	}
}

func uuidFromLocked(d *Daemon) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return uuidFrom(d.rng)
}

func match(p []string, want ...string) bool {
	if len(p) != len(want) {
		return false
	}
	for i := range p {
		if p[i] != want[i] {
			return false
		}
	}
	return true
}

// writeJSON writes a JSON body and flushes it, so the response is chunked
// (no Content-Length) like the real daemon's.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeErr(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		writeJSON(w, http.StatusInternalServerError, daemonError(err.Error(), nil))
		return
	}
	if ae.noContentType {
		// A nil entry stops net/http from sniffing one.
		w.Header()["Content-Type"] = nil
		w.WriteHeader(ae.status)
		_, _ = w.Write(ae.body)
		return
	}
	writeJSON(w, ae.status, ae.body)
}

func (d *Daemon) taskListLocked() []obj {
	ts := make([]obj, 0, len(d.order))
	for _, t := range d.order {
		ts = append(ts, t.json())
	}
	return ts
}

// readBody reads a request body as maria does: fully, as UTF-8 JSON.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return nil, &apiError{status: http.StatusBadRequest, body: jsonError(400, "Invalid request body"), msg: "read body: " + err.Error()}
	}
	if !utf8.Valid(b) {
		return nil, &apiError{status: http.StatusBadRequest, body: jsonError(400, "Invalid UTF-8 in request body"), msg: "invalid UTF-8"}
	}
	return b, nil
}

// errBadBody is a function, not a variable: its body is JSON built at the
// call, which a package-level variable would build at every perch start.
func errBadBody() *apiError {
	return &apiError{status: http.StatusBadRequest, body: jsonError(400, "Invalid request body"), msg: "invalid request body"}
}

// decodeJSON distinguishes malformed JSON from JSON of the wrong shape.
func decodeJSON(b []byte, v any) error {
	if !json.Valid(b) {
		return &apiError{status: http.StatusBadRequest, body: jsonError(400, "Invalid JSON in request body"), msg: "invalid JSON"}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errBadBody()
	}
	return nil
}

// parseMessageParam parses an OpenAI chat message param (§8.1).
func parseMessageParam(raw json.RawMessage) (*queued, error) {
	var m struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCalls  json.RawMessage `json:"tool_calls"`
		ToolCallID *string         `json:"tool_call_id"`
	}
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &m) != nil {
		return nil, errBadBody()
	}
	switch m.Role {
	case "user", "system":
	case "assistant":
		if len(m.ToolCalls) == 0 || string(m.ToolCalls) == "null" {
			return nil, errBadBody()
		}
	case "tool":
		if m.ToolCallID == nil {
			return nil, errBadBody()
		}
	default:
		return nil, errBadBody()
	}
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return nil, errBadBody()
	}
	q := &queued{role: m.Role}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		q.parts = []string{s}
		return q, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return nil, errBadBody()
	}
	for _, p := range parts {
		if p.Type != "text" || p.Text == nil {
			return nil, errBadBody()
		}
		q.parts = append(q.parts, *p.Text)
	}
	return q, nil
}

func (d *Daemon) serveCreate(w http.ResponseWriter, r *http.Request) {
	b, err := readBody(w, r)
	if err != nil {
		writeErr(w, err)
		return
	}
	var req struct {
		Name      *string         `json:"name"`
		Model     *string         `json:"model"`
		Message   json.RawMessage `json:"message"`
		Cwd       *string         `json:"cwd"`
		WebSearch *bool           `json:"web_search"`
	}
	if err := decodeJSON(b, &req); err != nil {
		writeErr(w, err)
		return
	}
	var p createParams
	if req.Name != nil {
		p.name, p.hasName = *req.Name, true
	}
	if req.Model != nil {
		p.model = *req.Model
	}
	if req.Cwd != nil {
		p.cwd = *req.Cwd
	}
	p.webSearch = req.WebSearch != nil && *req.WebSearch
	if len(req.Message) > 0 && string(req.Message) != "null" {
		if p.msg, err = parseMessageParam(req.Message); err != nil {
			writeErr(w, err)
			return
		}
	}
	_, taskJSON, reply, err := d.create(p)
	if err != nil {
		writeErr(w, err)
		return
	}
	out := o("task", taskJSON)
	if reply != nil {
		out = out.with("message", reply)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(prettyJSON(out))
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// ---- SSE ----

// streamContext ends when the client goes away or the daemon closes.
func (d *Daemon) streamContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(d.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// startSSE writes the §5.1 headers. False if the writer cannot stream.
func startSSE(w http.ResponseWriter) (http.Flusher, bool) {
	f, ok := w.(http.Flusher)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, daemonError("streaming unsupported", nil))
		return nil, false
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	f.Flush()
	return f, true
}

// serveTaskEvents is the daemon's GET /v1/task/{id}/events: the whole log
// from index 0, then live, forever (§5.2).
func (d *Daemon) serveTaskEvents(w http.ResponseWriter, r *http.Request, id string) {
	d.mu.Lock()
	t, err := d.lookupTask(id)
	d.mu.Unlock()
	if err != nil {
		writeErr(w, err)
		return
	}
	ctx, cancel := d.streamContext(r)
	defer cancel()
	f, ok := startSSE(w)
	if !ok {
		return
	}
	streamLog(ctx, w, f, t.log, 0)
}

// streamLog writes frames of log from index from on until ctx ends or a
// write fails.
func streamLog(ctx context.Context, w io.Writer, f http.Flusher, log *feed[[]byte], from int) {
	for {
		frames, err := log.wait(ctx, from)
		if err != nil {
			return
		}
		from += len(frames)
		for _, fr := range frames {
			if _, err := w.Write(fr); err != nil {
				return
			}
			f.Flush()
		}
	}
}

// serveDaemonEvents is GET /v1/events (§5.3).
func (d *Daemon) serveDaemonEvents(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := d.streamContext(r)
	defer cancel()
	d.mu.Lock()
	sync := mustJSON(o("tasks", d.taskListLocked()))
	d.mu.Unlock()
	f, ok := startSSE(w)
	if !ok {
		return
	}
	if _, err := w.Write(frame("daemon.tasks.synchronized", sync)); err != nil {
		return
	}
	f.Flush()
	for from := 0; ; {
		evs, err := d.events.wait(ctx, from)
		if err != nil {
			return
		}
		from += len(evs)
		for _, ev := range evs {
			data := ev.data
			if ev.taskID != "" {
				// The payload is the task's state now, not at the transition.
				d.mu.Lock()
				data = mustJSON(o("task", d.tasks[ev.taskID].json()))
				d.mu.Unlock()
			}
			if _, err := w.Write(frame(ev.name, data)); err != nil {
				return
			}
			f.Flush()
		}
	}
}

// ---- forwarded task-server routes (§3.8, §3.9, §4) ----

// taskRoute says which methods the task server's route allows, for 405s,
// and whether it is one of its routes (a switch: a package-level map would
// be built at every perch start).
func taskRoute(route string) (allow string, known bool) {
	switch route {
	case "status", "queued-messages", "events", "tools":
		return "GET", true
	case "message", "cancel", "enabled-tools", "external-event", "external-event/user-message", "external-event/cancel":
		return "POST", true
	case "system-prompt":
		return "GET, POST", true
	}
	return "", false
}

func (d *Daemon) serveForward(w http.ResponseWriter, r *http.Request, id, rest string) {
	d.mu.Lock()
	t, err := d.lookupTask(id)
	if err == nil && t.status == statusStopped {
		err = d.resumeLocked(t)
	}
	d.mu.Unlock()
	if err != nil {
		writeErr(w, err)
		return
	}
	// The task server's router strips the query string.
	route := rest
	if i := strings.IndexByte(route, '?'); i >= 0 {
		route = route[:i]
	}
	allow, known := taskRoute(route)
	if !known {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		d.serveTaskFile(w, t, route)
		return
	}
	if !strings.Contains(allow, r.Method) {
		w.Header().Set("Allow", allow)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	switch route {
	case "status":
		d.mu.Lock()
		st := statusIdle
		if t.run != nil {
			st = statusGenerating
		}
		body := mustJSON(o("status", st, "web_search", t.webSearch))
		d.mu.Unlock()
		writeJSON(w, http.StatusOK, body)
	case "queued-messages":
		d.mu.Lock()
		qs := make([]obj, 0, len(t.queue))
		for _, q := range t.queue {
			qs = append(qs, o("id", q.id, "message", q.param()))
		}
		d.mu.Unlock()
		writeJSON(w, http.StatusOK, mustJSON(qs))
	case "message":
		d.servePost(w, r, t)
	case "cancel":
		_, _ = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, maxBody))
		d.mu.Lock()
		body, err := d.cancelLocked(t)
		d.mu.Unlock()
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, mustJSON(body))
	case "events":
		d.serveProcessEvents(w, r, t)
	case "tools":
		d.mu.Lock()
		m := obj{}
		for _, n := range toolNames {
			m = m.with(n, o("enabled", !t.disabled[n]))
		}
		d.mu.Unlock()
		writeJSON(w, http.StatusOK, mustJSON(m))
	case "enabled-tools":
		d.serveEnabledTools(w, r, t)
	case "system-prompt":
		d.serveSystemPrompt(w, r, t)
	default: // external events: accepted; the scripted agent has no use for them
		b, err := readBody(w, r)
		if err == nil {
			var v any
			err = decodeJSON(b, &v)
		}
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, []byte(`{"success":true}`))
	}
}

func (d *Daemon) servePost(w http.ResponseWriter, r *http.Request, t *task) {
	b, err := readBody(w, r)
	if err != nil {
		writeErr(w, err)
		return
	}
	var req struct {
		Message   json.RawMessage `json:"message"`
		WebSearch *bool           `json:"web_search"`
	}
	if err := decodeJSON(b, &req); err != nil {
		writeErr(w, err)
		return
	}
	m, err := parseMessageParam(req.Message)
	if err != nil {
		writeErr(w, err)
		return
	}
	m.webSearch = req.WebSearch != nil && *req.WebSearch
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		writeJSON(w, http.StatusServiceUnavailable, daemonError("Daemon is shutting down", nil))
		return
	}
	reply := d.postLocked(t, *m)
	d.mu.Unlock()
	writeJSON(w, http.StatusOK, mustJSON(reply))
}

// serveProcessEvents is the task server's own /v1/events reached through the
// daemon: the current queue, then what this process has streamed.
func (d *Daemon) serveProcessEvents(w http.ResponseWriter, r *http.Request, t *task) {
	ctx, cancel := d.streamContext(r)
	defer cancel()
	d.mu.Lock()
	snap := frame(eventSnapshot, snapshotJSON(t.queue))
	from := t.procStart + 1 // skip the snapshot the daemon's subscription got
	d.mu.Unlock()
	f, ok := startSSE(w)
	if !ok {
		return
	}
	if _, err := w.Write(snap); err != nil {
		return
	}
	f.Flush()
	streamLog(ctx, w, f, t.log, from)
}

func (d *Daemon) serveEnabledTools(w http.ResponseWriter, r *http.Request, t *task) {
	b, err := readBody(w, r)
	if err != nil {
		writeErr(w, err)
		return
	}
	var names []string
	if err := decodeJSON(b, &names); err != nil {
		writeErr(w, err)
		return
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			writeJSON(w, http.StatusBadRequest, jsonError(400, "Duplicate tool name"))
			return
		}
		seen[n] = true
	}
	d.mu.Lock()
	t.disabled = map[string]bool{}
	for _, n := range toolNames {
		t.disabled[n] = !seen[n]
	}
	d.mu.Unlock()
	writeJSON(w, http.StatusOK, []byte(`{}`))
}

func (d *Daemon) serveSystemPrompt(w http.ResponseWriter, r *http.Request, t *task) {
	if r.Method == http.MethodGet {
		d.mu.Lock()
		var v any = systemPrompt
		if t.prompt != nil {
			v = *t.prompt
		}
		d.mu.Unlock()
		writeJSON(w, http.StatusOK, mustJSON(v))
		return
	}
	b, err := readBody(w, r)
	if err != nil {
		writeErr(w, err)
		return
	}
	var p *string
	if err := decodeJSON(b, &p); err != nil {
		writeErr(w, err)
		return
	}
	d.mu.Lock()
	t.prompt = p
	if p != nil {
		d.emit(t, "SystemPromptSet", o("prompt", *p))
	} else {
		d.emit(t, "SystemPromptSet", nil)
	}
	d.mu.Unlock()
	writeJSON(w, http.StatusOK, []byte(`{}`))
}

// serveTaskFile is the task server's static fallback: files from the task
// cwd; 404 without a body otherwise.
func (d *Daemon) serveTaskFile(w http.ResponseWriter, t *task, route string) {
	rel := path.Clean("/" + route)
	if rel == "/" {
		rel = "/index.html"
	}
	b, err := os.ReadFile(filepath.Join(t.cwd, filepath.FromSlash(rel)))
	if err != nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	ct := "application/octet-stream"
	switch path.Ext(rel) {
	case ".html":
		ct = "text/html"
	case ".js":
		ct = "application/javascript"
	case ".css":
		ct = "text/css"
	case ".png":
		ct = "image/png"
	case ".jpg":
		ct = "image/jpeg"
	case ".gif":
		ct = "image/gif"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
