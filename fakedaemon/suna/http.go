package suna

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Handler serves the API under /v1 (current deployments) and /api (older
// ones); /health answers at the root too.
func (s *Server) Handler() http.Handler {
	api := http.NewServeMux()
	route := func(pattern string, auth, queryToken bool, h http.HandlerFunc) {
		api.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.requests[pattern]++
			s.mu.Unlock()
			if s.opts.Logf != nil {
				s.opts.Logf("%s %s", r.Method, r.URL.Path) // the path only: the query may hold a token
			}
			if auth && !s.authorized(w, r, queryToken) {
				return
			}
			h(w, r)
		})
	}
	route("GET /health", false, false, s.health)
	route("GET /threads", true, false, s.listThreads)
	route("GET /threads/{id}/messages", true, false, s.messages)
	route("POST /agent/start", true, false, s.start)
	route("GET /agent-run/{id}/stream", true, true, s.stream)
	route("GET /agent-run/{id}", true, false, s.runInfo)
	route("GET /agent-runs/{id}/status", true, false, s.runStatus)
	route("GET /agent-runs/active", true, false, s.activeRuns)
	route("GET /thread/{id}/agent-runs", true, false, s.threadRuns)
	route("POST /agent-run/{id}/stop", true, false, s.stop)
	route("POST /agent-runs/{id}/stop", true, false, s.stop)

	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", api))
	mux.Handle("/api/", http.StripPrefix("/api", api))
	mux.HandleFunc("GET /health", s.health)
	return mux
}

// authorized checks the bearer token (401 without one, 403 with another).
func (s *Server) authorized(w http.ResponseWriter, r *http.Request, queryToken bool) bool {
	if s.opts.Token == "" {
		return true
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok && queryToken {
		tok = r.URL.Query().Get("token")
		ok = tok != ""
	}
	switch {
	case !ok || tok == "":
		writeJSON(w, http.StatusUnauthorized, obj{{"detail", "Authentication required"}})
		return false
	case subtle.ConstantTimeCompare([]byte(tok), []byte(s.opts.Token)) != 1:
		writeJSON(w, http.StatusForbidden, obj{{"detail", "Invalid token: signature verification failed"}})
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := appendJSON(nil, v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeBody(w, status, body)
}

// writeBody sends a JSON body, written in parts.
func writeBody(w http.ResponseWriter, status int, parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	w.Header().Set("Content-Type", "application/json")
	// As Suna's JSON responses (FastAPI) do, whatever their size.
	w.Header().Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(status)
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return
		}
	}
}

func stamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000+00:00")
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, obj{{"status", "ok"}, {"timestamp", stamp(s.opts.Clock())}, {"instance_id", "fake-suna"}})
}

func (s *Server) listThreads(w http.ResponseWriter, r *http.Request) {
	page, limit := intParam(r, "page", 1), intParam(r, "limit", 100)
	s.mu.Lock()
	all := s.sortedThreads()
	var out []obj
	for i := (page - 1) * limit; i < len(all) && i < page*limit; i++ {
		t := all[i]
		out = append(out, obj{{"thread_id", t.id}, {"project_id", t.projectID}, {"name", t.name},
			{"is_public", false}, {"created_at", stamp(t.created)}, {"updated_at", stamp(t.updated)},
			{"metadata", obj{}}, {"project", obj{{"project_id", t.projectID}, {"name", t.name}}}})
	}
	total := len(all)
	s.mu.Unlock()
	if out == nil {
		out = []obj{}
	}
	writeJSON(w, http.StatusOK, obj{{"threads", out},
		{"pagination", obj{{"page", page}, {"limit", limit}, {"total", total}, {"pages", (total + limit - 1) / limit}}}})
}

func intParam(r *http.Request, name string, def int) int {
	if v, err := strconv.Atoi(r.URL.Query().Get(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// messages is the thread's history: newest first unless order=asc, and
// (optimized, the default) without the content of rows other than the
// user's. The body is made of each row's encodings, made when the row was
// stored (storeRow); oldest first, it is written from the batches the
// thread keeps them in (thread.asc), with no copy. Encoding a long
// thread's megabyte of rows on every request, then allocating the answer,
// was the fake's own cost, and it fell on the client's clock (perch export
// reads the history at a run's end).
func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	asc := q.Get("order") == "asc"
	optimized := q.Get("optimized") != "false"
	form := 0
	if optimized {
		form = 1
	}
	s.mu.Lock()
	t := s.threads[r.PathValue("id")]
	if t == nil {
		s.mu.Unlock()
		writeJSON(w, http.StatusNotFound, obj{{"detail", "Thread not found"}})
		return
	}
	if asc {
		// Stored batches never change: they are written outside the lock.
		parts := append([][]byte{[]byte(messagesHead)}, t.asc[form]...)
		s.mu.Unlock()
		writeBody(w, http.StatusOK, append(parts, []byte(messagesTail))...)
		return
	}
	rows := make([][]byte, 0, len(t.rows))
	size := 0
	for _, row := range t.rows {
		b := row.full
		if optimized {
			b = row.optimized
		}
		rows = append(rows, b)
		size += len(b) + 1
	}
	s.mu.Unlock()
	slices.Reverse(rows)
	body := make([]byte, 0, len(messagesHead)+size)
	body = append(body, messagesHead...)
	for i, b := range rows {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, b...)
	}
	writeBody(w, http.StatusOK, body, []byte(messagesTail))
}

// The messages route's answer around its rows.
const (
	messagesHead = `{"messages":[`
	messagesTail = `]}`
)

var comma = []byte{','}

// rowList is a batch of rows stored together (a run's, when it ends),
// with their encodings joined as the messages route writes them: a run's
// rows are joined as they come, not when the run ends.
type rowList struct {
	rows   []storedRow
	joined [2][]byte // whole and optimized, comma-separated
}

func (l *rowList) add(row storedRow) {
	for form, b := range [2][]byte{row.full, row.optimized} {
		if len(l.joined[form]) > 0 {
			l.joined[form] = append(l.joined[form], ',')
		}
		l.joined[form] = append(l.joined[form], b...)
	}
	l.rows = append(l.rows, row)
}

// keep adds a batch of rows to the thread's history; the batch is not
// changed after.
func (t *thread) keep(l *rowList) {
	if len(l.rows) == 0 {
		return
	}
	for form := range t.asc {
		if len(t.rows) > 0 {
			t.asc[form] = append(t.asc[form], comma)
		}
		t.asc[form] = append(t.asc[form], l.joined[form])
	}
	t.rows = append(t.rows, l.rows...)
}

// storedRow is a history row with its encodings in the messages route's
// answer: whole, and optimized (a row other than the user's without its
// content). A stored row never changes.
type storedRow struct {
	row             obj
	full, optimized []byte
}

// storeRow encodes a row for the history. The rows are the fake's own
// values (strings, numbers, booleans, objects): they always encode.
func storeRow(row obj) storedRow {
	full, err := row.appendJSON(nil)
	if err != nil {
		panic(fmt.Sprintf("fake Suna: a history row does not encode: %v", err))
	}
	if row.get("type") == "user" {
		return storedRow{row: row, full: full, optimized: full}
	}
	cp := make(obj, 0, len(row))
	for _, p := range row {
		if p.k != "content" {
			cp = append(cp, p)
		}
	}
	opt, err := cp.appendJSON(nil)
	if err != nil {
		panic(fmt.Sprintf("fake Suna: a history row does not encode: %v", err))
	}
	return storedRow{row: row, full: full, optimized: opt}
}

func (s *Server) start(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(1 << 20); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		writeJSON(w, http.StatusBadRequest, obj{{"detail", "bad form: " + err.Error()}})
		return
	}
	threadID, prompt := r.FormValue("thread_id"), r.FormValue("prompt")
	s.mu.Lock()
	tid, rid, err := s.startLocked(threadID, prompt)
	var project string
	if t := s.threads[tid]; t != nil {
		project = t.projectID
	}
	s.mu.Unlock()
	switch {
	case errors.Is(err, errNoThread):
		writeJSON(w, http.StatusNotFound, obj{{"detail", "Thread not found"}})
	case errors.Is(err, errBusy):
		writeJSON(w, http.StatusPaymentRequired, obj{{"detail", obj{{"message", "Maximum of 1 parallel agent runs allowed on this thread."},
			{"running_count", 1}, {"limit", 1}, {"error_code", "AGENT_RUN_LIMIT_EXCEEDED"}, {"running_thread_ids", []any{threadID}}}}})
	case err != nil:
		writeJSON(w, http.StatusServiceUnavailable, obj{{"detail", err.Error()}})
	default:
		writeJSON(w, http.StatusOK, obj{{"thread_id", tid}, {"agent_run_id", rid}, {"project_id", project},
			{"sandbox_id", nil}, {"status", "running"}})
	}
}

func (s *Server) findRun(w http.ResponseWriter, r *http.Request) *run {
	s.mu.Lock()
	run := s.runs[r.PathValue("id")]
	s.mu.Unlock()
	if run == nil {
		writeJSON(w, http.StatusNotFound, obj{{"detail", "Agent run not found"}})
	}
	return run
}

func (s *Server) runObj(r *run) obj {
	var errText any
	if r.errText != "" {
		errText = r.errText
	}
	return obj{{"id", r.id}, {"thread_id", r.threadID}, {"status", r.status},
		{"started_at", stamp(r.started)}, {"completed_at", stamp(r.completed)}, {"error", errText}}
}

// runInfo is GET /agent-run/{id}: the run as the database has it (the
// judge of its end, unlike the stream's cached status).
func (s *Server) runInfo(w http.ResponseWriter, r *http.Request) {
	run := s.findRun(w, r)
	if run == nil {
		return
	}
	s.mu.Lock()
	o := s.runObj(run)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, o)
}

func (s *Server) runStatus(w http.ResponseWriter, r *http.Request) {
	run := s.findRun(w, r)
	if run == nil {
		return
	}
	s.mu.Lock()
	o := s.runObj(run)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, obj{{"status", o.get("status")}, {"error", o.get("error")}})
}

func (s *Server) activeRuns(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	out := []obj{}
	for _, id := range s.order {
		for _, r := range s.threads[id].runs {
			if r.status == "running" {
				out = append(out, s.runObj(r))
			}
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, obj{{"active_runs", out}})
}

// threadRuns lists a thread's runs, newest first.
func (s *Server) threadRuns(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	t := s.threads[r.PathValue("id")]
	if t == nil {
		s.mu.Unlock()
		writeJSON(w, http.StatusNotFound, obj{{"detail", "Thread not found"}})
		return
	}
	out := make([]obj, 0, len(t.runs))
	for i := len(t.runs) - 1; i >= 0; i-- {
		out = append(out, s.runObj(t.runs[i]))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, obj{{"agent_runs", out}})
}

func (s *Server) stop(w http.ResponseWriter, r *http.Request) {
	if !s.stopRun(r.PathValue("id")) {
		writeJSON(w, http.StatusNotFound, obj{{"detail", "Agent run not found"}})
		return
	}
	writeJSON(w, http.StatusOK, obj{{"status", "stopped"}})
}

var pingFrame = []byte("data: {\"type\": \"ping\"}\n\n")

// stream is GET /agent-run/{id}/stream: catch-up (skipped with last_id),
// then live frames, pings while quiet.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	run := s.findRun(w, r)
	if run == nil {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()

	s.mu.Lock()
	next := 0
	if last := r.URL.Query().Get("last_id"); last != "" {
		ms, seq := parseEventID(last)
		next = len(run.frames)
		for i, f := range run.frames {
			if f.ms > ms || (f.ms == ms && f.seq > seq) {
				next = i
				break
			}
		}
	} else if s.opts.Trim > 0 && len(run.frames) > s.opts.Trim {
		next = len(run.frames) - s.opts.Trim
	}
	s.mu.Unlock()

	ticker := time.NewTicker(s.opts.Ping)
	defer ticker.Stop()
	sent, idle, written := 0, 0, false
	var buf []byte
	for {
		s.mu.Lock()
		frames := run.frames[next:len(run.frames):len(run.frames)]
		wake, status, errText := run.wake, run.status, run.errText
		s.mu.Unlock()
		buf = buf[:0]
		for i, f := range frames {
			buf = append(append(append(buf, "data: "...), f.data...), "\n\n"...)
			next++
			sent++
			if f.end || (s.opts.DropEvery > 0 && sent%s.opts.DropEvery == 0) {
				// The stream closes after a terminal frame; a drop cuts it.
				_, _ = w.Write(buf)
				fl.Flush()
				return
			}
			// A catch-up goes out in pieces, as Suna writes it frame by
			// frame, so the client reads while the rest is sent.
			if len(buf) >= 32<<10 || i == len(frames)-1 {
				if _, err := w.Write(buf); err != nil {
					return
				}
				fl.Flush()
				written, idle = true, 0
				buf = buf[:0]
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-wake:
		case <-ticker.C:
			if written {
				written = false
				continue
			}
			if _, err := w.Write(pingFrame); err != nil {
				return
			}
			fl.Flush()
			if status == "running" || s.opts.CachedRunning {
				continue
			}
			// A finished run whose end this connection never saw: after a
			// few quiet ticks, and only when nothing else was sent, the
			// route reads the run's status and sends it.
			idle++
			if sent == 0 && idle >= s.opts.IdleTicks {
				end := obj{{"type", "status"}, {"status", status}}
				if errText != "" {
					end = end.with("message", errText)
				}
				_, _ = w.Write(append(append([]byte("data: "), pyDumps(end)...), "\n\n"...))
				fl.Flush()
				return
			}
		}
	}
}

func parseEventID(id string) (int64, int64) {
	a, b, _ := strings.Cut(id, "-")
	ms, _ := strconv.ParseInt(a, 10, 64)
	seq, _ := strconv.ParseInt(b, 10, 64)
	return ms, seq
}
