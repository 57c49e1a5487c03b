// Package suna is a fake Suna (Kortix "AgentPress") API for tests, demos
// and benchmarks: the routes perch's live Suna backend uses (threads, their
// message history, agent runs, each run's SSE stream, start and stop), with
// scripted agents and fault knobs. See docs/live/suna.md.
//
// It speaks the shapes of the real API: stream frames are data-only, each
// payload is written the way Python's json.dumps writes it and carries an
// injected "_event_id" ("<ms>-<seq>"), a reconnect with last_id skips the
// catch-up, keep-alive pings fill quiet spells, and a stop writes nothing
// to the stream. When a run ends, its rows (assistant messages with their
// metadata, tool rows, status rows, llm_response_end rows with usage) are
// written into the thread's history, so the history after a run holds what
// the stream showed.
//
// Like the maria fake, it builds its wire JSON itself and does not use
// perch's decoders, so it tests them independently.
//
// Simplifications: one user, one project per thread, no sandboxes, no
// billing; the stored stream is kept whole (Options.Trim emulates a
// trimmed one).
package suna

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Options configure a Server. The zero value is usable (no auth, 5 s
// pings, realistic pacing).
type Options struct {
	// Token, when set, is the bearer token every route requires (401
	// without one, 403 with another). Only the stream route also takes it
	// as ?token=.
	Token string
	// Ping is the keep-alive interval of the stream (0: 5 s).
	Ping time.Duration
	// IdleTicks is how many quiet ping ticks a stream of a finished run
	// waits before it reads the run's status and sends it, when nothing
	// else was sent on the connection (0: 3).
	IdleTicks int
	// FrameDelay paces a scripted run: the pause between two frames (0:
	// 20 ms; negative: none).
	FrameDelay time.Duration
	// Pause is a quiet spell (pings only) the demo agent takes before its
	// final answer.
	Pause time.Duration
	// DropEvery closes each stream connection after that many frames (0:
	// never): the client has to resume with last_id.
	DropEvery int
	// CachedRunning makes the stream route believe every run is still
	// running (Suna caches the status): a stream never ends on its own
	// and never reports a run's end it did not write itself.
	CachedRunning bool
	// Trim keeps only the last Trim frames of a run for the catch-up (0:
	// all): a late joiner sees a stream that starts mid-response.
	Trim int
	// Hold makes every run wait before its last frame until Release (as
	// Server.Hold does from the start).
	Hold bool
	// RowsAsMade writes each row of a run into the thread's history when
	// it is made, as Suna's database has it while the run goes on (by
	// default a run's rows are written when it ends).
	RowsAsMade bool
	// ToolsDuringReply runs a tool the way Suna's current pipeline does:
	// before the assistant row that calls it is written. The stream then
	// sends the call's chunks, the tool's start, output, row and end, and
	// only then the assistant's complete row; the stored tool row is older
	// than the assistant row and names it (assistant_message_id).
	ToolsDuringReply bool
	// Clock stamps rows and event ids (nil: time.Now).
	Clock func() time.Time
	// Logf logs requests (nil: quiet). Tokens are never logged.
	Logf func(format string, args ...any)
}

// Server is one fake Suna API. Its state outlives Serve, so serving again
// on the same address is a restart that keeps threads and runs (as Redis
// and the database outlive an API process).
type Server struct {
	opts Options

	mu       sync.Mutex
	threads  map[string]*thread
	order    []string // thread ids, oldest first
	runs     map[string]*run
	ids      int
	lastAt   time.Time
	lastMS   int64
	lastSeq  int64
	held     chan struct{} // closed by Release
	holding  bool          // runs started now wait on held
	closed   bool
	agents   sync.WaitGroup
	stopAll  chan struct{}
	requests map[string]int
}

type thread struct {
	id, projectID, name string
	created, updated    time.Time
	rows                []storedRow // the history, oldest first
	// asc is the messages route's answer oldest first, whole and
	// optimized, between its head and its tail: each stored batch of rows
	// (rowList.joined), with a comma between two batches.
	asc  [2][][]byte
	runs []*run
}

// run is an agent run and its stored stream.
type run struct {
	id, threadID string
	status       string // running, completed, failed, stopped
	errText      string
	started      time.Time
	completed    time.Time
	frames       []frame
	wake         chan struct{} // closed and replaced when frames or status change
	stop         chan struct{}
	stopOnce     sync.Once
	held         chan struct{} // nil, or the hold it waits out before its last frame
	pending      rowList       // rows written to the history when the run ends
}

type frame struct {
	id   string // _event_id
	ms   int64
	seq  int64
	data []byte
	end  bool // a terminal status: the stream closes after it
}

// New returns a server with no threads.
func New(opts Options) *Server {
	if opts.Ping <= 0 {
		opts.Ping = 5 * time.Second
	}
	if opts.IdleTicks <= 0 {
		opts.IdleTicks = 3
	}
	if opts.FrameDelay == 0 {
		opts.FrameDelay = 20 * time.Millisecond
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	return &Server{opts: opts, threads: map[string]*thread{}, runs: map[string]*run{},
		holding: opts.Hold, held: make(chan struct{}), stopAll: make(chan struct{}), requests: map[string]int{}}
}

// Serve answers on ln until ctx ends, then closes every connection
// (streams included) and returns nil. It can be called again, on a new
// listener for the same address, to emulate a restart.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
		}
		_ = srv.Close()
	}()
	err := srv.Serve(ln)
	close(done)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops every running agent (their runs end as stopped) and waits
// for them. The server answers no more runs afterwards.
func (s *Server) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.stopAll)
	}
	s.mu.Unlock()
	s.agents.Wait()
}

// Hold makes the runs started from now on wait before their last frame
// until the next Release, so that a test can act while one runs, however
// long that takes.
func (s *Server) Hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.holding {
		s.holding, s.held = true, make(chan struct{})
	}
}

// Release lets the held runs finish; runs started later are not held
// (until the next Hold).
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holding {
		s.holding = false
		close(s.held)
	}
}

// Requests is how many requests a route pattern answered ("POST
// /agent/start"), for tests that count deliveries.
func (s *Server) Requests(pattern string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[pattern]
}

// now is a strictly increasing timestamp, so that history rows sort in
// the order they were made.
func (s *Server) now() time.Time {
	t := s.opts.Clock().UTC().Truncate(time.Microsecond)
	if !t.After(s.lastAt) {
		t = s.lastAt.Add(time.Microsecond)
	}
	s.lastAt = t
	return t
}

// newID is a deterministic UUID-shaped id.
func (s *Server) newID(kind byte) string {
	s.ids++
	return fmt.Sprintf("%08x-0000-4000-8%03x-%012x", s.ids, kind, s.ids)
}

// eventID is the next Redis-style stream entry id.
func (s *Server) eventID(at time.Time) (string, int64, int64) {
	ms := at.UnixMilli()
	if ms <= s.lastMS {
		ms = s.lastMS
		s.lastSeq++
	} else {
		s.lastSeq = 0
	}
	s.lastMS = ms
	return fmt.Sprintf("%d-%d", ms, s.lastSeq), ms, s.lastSeq
}

// Thread is what tests and the command learn of a thread.
type Thread struct {
	ID     string
	RunIDs []string // oldest first
	Status string   // the latest run's status ("" without runs)
}

// Threads lists the threads, oldest first.
func (s *Server) Threads() []Thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Thread, 0, len(s.order))
	for _, id := range s.order {
		t := s.threads[id]
		th := Thread{ID: t.id}
		for _, r := range t.runs {
			th.RunIDs = append(th.RunIDs, r.id)
			th.Status = r.status
		}
		out = append(out, th)
	}
	return out
}

// Start starts a run on a thread ("" creates one), as POST /agent/start
// does, and returns the thread and run ids.
func (s *Server) Start(threadID, prompt string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startLocked(threadID, prompt)
}

// errBusy: the thread already has a running run (Suna's concurrency limit).
var errBusy = errors.New("thread has a running agent run")

// errNoThread: no such thread.
var errNoThread = errors.New("thread not found")

func (s *Server) startLocked(threadID, prompt string) (string, string, error) {
	if s.closed {
		return "", "", errors.New("server closed")
	}
	var t *thread
	if threadID == "" {
		now := s.now()
		t = &thread{id: s.newID('t'), projectID: s.newID('p'), name: title(prompt), created: now, updated: now}
		s.threads[t.id] = t
		s.order = append(s.order, t.id)
	} else {
		t = s.threads[threadID]
		if t == nil {
			return "", "", errNoThread
		}
		for _, r := range t.runs {
			if r.status == "running" {
				return "", "", errBusy
			}
		}
	}
	if strings.TrimSpace(prompt) != "" {
		// The user's row is written before the run starts.
		var user rowList
		user.add(storeRow(s.row(t.id, "user", true, obj{{"role", "user"}, {"content", prompt}}, obj{})))
		t.keep(&user)
	}
	r := &run{id: s.newID('r'), threadID: t.id, status: "running", started: s.now(),
		wake: make(chan struct{}), stop: make(chan struct{})}
	if s.holding {
		r.held = s.held
	}
	t.runs = append(t.runs, r)
	t.updated = r.started
	s.runs[r.id] = r
	s.agents.Add(1)
	go s.agent(r, pick(prompt))
	return t.id, r.id, nil
}

// row is a history row as the database holds it (content and metadata as
// objects).
func (s *Server) row(threadID, typ string, llm bool, content, meta obj) obj {
	return s.rowAs(s.newID('m'), threadID, typ, llm, content, meta)
}

// rowAs is row with its message id given (made earlier, as Suna makes the
// assistant message's id before its tools run).
func (s *Server) rowAs(id, threadID, typ string, llm bool, content, meta obj) obj {
	at := s.now().Format("2006-01-02T15:04:05.000000+00:00")
	return obj{{"message_id", id}, {"thread_id", threadID}, {"type", typ},
		{"is_llm_message", llm}, {"content", content}, {"metadata", meta},
		{"created_at", at}, {"updated_at", at}}
}

// stopRun stops a run: the agent leaves its loop and writes nothing more.
func (s *Server) stopRun(id string) bool {
	s.mu.Lock()
	r := s.runs[id]
	s.mu.Unlock()
	if r == nil {
		return false
	}
	r.stopOnce.Do(func() { close(r.stop) })
	return true
}

// append stores a frame of a run's stream.
func (s *Server) append(r *run, payload obj) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appendLocked(r, payload)
}

func (s *Server) appendLocked(r *run, payload obj) {
	id, ms, seq := s.eventID(s.opts.Clock())
	end := false
	if payload.get("type") == "status" {
		switch payload.get("status") {
		case "completed", "failed", "stopped", "error":
			end = true
		}
	}
	data := pyDumps(payload.with("_event_id", id))
	r.frames = append(r.frames, frame{id: id, ms: ms, seq: seq, data: data, end: end})
	s.wakeLocked(r)
}

func (s *Server) wakeLocked(r *run) {
	close(r.wake)
	r.wake = make(chan struct{})
}

// finish ends a run: its rows go into the history, its status is set.
func (s *Server) finish(r *run, status, errText string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.threads[r.threadID]
	t.keep(&r.pending)
	r.pending = rowList{}
	r.status, r.errText, r.completed = status, errText, s.now()
	t.updated = r.completed
	s.wakeLocked(r)
}

// sortedThreads: newest activity first (GET /threads).
func (s *Server) sortedThreads() []*thread {
	out := make([]*thread, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.threads[id])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].updated.After(out[j].updated) })
	return out
}

func title(prompt string) string {
	p := strings.Join(strings.Fields(prompt), " ")
	if len(p) > 40 {
		p = p[:40]
		for !utf8ValidEnd(p) {
			p = p[:len(p)-1]
		}
		p += "…"
	}
	if p == "" {
		p = "New chat"
	}
	return p
}

func utf8ValidEnd(s string) bool {
	if s == "" {
		return true
	}
	c := s[len(s)-1]
	if c < 0x80 {
		return true
	}
	// Walk back to the rune's first byte and check it is whole.
	i := len(s) - 1
	for i > 0 && s[i]&0xc0 == 0x80 {
		i--
	}
	n := len(s) - i
	switch b := s[i]; {
	case b&0xe0 == 0xc0:
		return n == 2
	case b&0xf0 == 0xe0:
		return n == 3
	case b&0xf8 == 0xf0:
		return n == 4
	}
	return false
}

// Frames is how many frames a run's stream holds so far (-1: no such run).
func (s *Server) Frames(runID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[runID]
	if r == nil {
		return -1
	}
	return len(r.frames)
}

// RunStatus is a run's status as the database has it ("" for no such run).
func (s *Server) RunStatus(runID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.runs[runID]; r != nil {
		return r.status
	}
	return ""
}
