// Package fakedaemon emulates the maria agent daemon (docs/protocol.md): its HTTP
// routes, its per-task append-only SSE logs and a scripted, deterministic
// agent. It builds every byte of wire JSON itself (it deliberately does not
// use perch's own events or client packages) so that it tests the client
// independently.
//
// PostToolCall.result flavour (§12.2): DialectHead sends the rendered string
// (result == text), DialectLegacy the structured JSON of older builds, and
// DialectDocs the flat event shapes of maria's outdated docs. Failures look
// the same in all three.
//
// Beyond the brief's API the package exports Daemon.Close (for users of
// Handler without Start), Daemon.ShutdownRequested and DefaultModel.
//
// Simplifications: no task-server processes exist, so forwarded routes are
// answered in-process; the agent touches no files except that write_to_file
// really appends in a temp cwd the daemon created; external events are accepted but ignored;
// the auth routes answer statically.
package fakedaemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Dialect selects which generation of the maria wire format the fake speaks.
type Dialect string

const (
	// DialectHead is maria at HEAD: envelope {"id","created","desc":{"msg":…}}
	// and PostToolCall.result == text (a string).
	DialectHead Dialect = "head"
	// DialectLegacy has the same envelope, but PostToolCall.result is the
	// tool's structured JSON (docs/protocol.md §7).
	DialectLegacy Dialect = "legacy"
	// DialectDocs is the flat {"id":<int>,"msg":…} format of maria's docs
	// (MessageAdded, RequestCompleted, TodoUpdated …).
	DialectDocs Dialect = "docs"
)

// Options configure a Daemon.
type Options struct {
	Dialect Dialect                          // "" = head
	Speed   float64                          // time scale; 1 = realistic pacing, 10 = ten times faster; 0 means 1
	Model   string                           // default "anthropic/claude-sonnet-4.5"
	Clock   func() time.Time                 // optional; for "created" stamps
	Seed    int64                            // seeds the per-daemon RNG so ids are reproducible
	Logf    func(format string, args ...any) // optional request log
	// HoldSlowTools makes the slow tool (the benchmark) run until
	// ReleaseSlowTools instead of for its scaled time, so that a test can
	// act while it runs at any Speed, however loaded the machine.
	HoldSlowTools bool
}

// DefaultModel is the model used when Options.Model is empty.
const DefaultModel = "anthropic/claude-sonnet-4.5"

// Pacing at Speed 1.
const (
	modelDelay    = 800 * time.Millisecond
	toolDelay     = 300 * time.Millisecond
	slowToolDelay = 6 * time.Second
)

// Daemon is one emulated maria daemon. All task state is guarded by mu; the
// per-task logs have their own locks so that stream writers never hold mu
// while writing to a socket.
type Daemon struct {
	dialect Dialect
	speed   float64
	model   string
	clock   func() time.Time
	logf    func(format string, args ...any)
	seed    int64

	ctx    context.Context // cancelled by Close: ends streams and agent runs
	cancel context.CancelFunc
	wg     sync.WaitGroup // agent and replay goroutines

	shutdownOnce sync.Once
	shutdown     chan struct{} // closed by POST /v1/shutdown
	closeOnce    sync.Once

	holdSlow    bool
	releaseOnce sync.Once
	released    chan struct{} // closed by ReleaseSlowTools

	mu       sync.Mutex
	closed   bool
	rng      *rand.Rand // task ids and ports
	ordinal  uint64     // seeds each task's own RNG
	tasks    map[string]*task
	order    []*task
	events   *feed[daemonEvent]
	tempDirs []string
}

// daemonEvent is one entry of the daemon-wide /v1/events log. A
// daemon.task.changed entry only names its task: the payload is the task's
// state at write time, as the real daemon does (§5.3).
type daemonEvent struct {
	name   string
	taskID string
	data   []byte
}

// New creates a daemon. It serves nothing until Handler or Start is used.
func New(opts Options) *Daemon {
	d := &Daemon{
		dialect:  opts.Dialect,
		speed:    opts.Speed,
		model:    opts.Model,
		clock:    opts.Clock,
		logf:     opts.Logf,
		seed:     opts.Seed,
		shutdown: make(chan struct{}),
		holdSlow: opts.HoldSlowTools,
		released: make(chan struct{}),
		rng:      rand.New(rand.NewPCG(uint64(opts.Seed), 0x6d61726961)),
		tasks:    map[string]*task{},
		events:   newFeed[daemonEvent](),
	}
	if d.dialect == "" {
		d.dialect = DialectHead
	}
	if d.speed <= 0 {
		d.speed = 1
	}
	if d.model == "" {
		d.model = DefaultModel
	}
	if d.clock == nil {
		d.clock = time.Now
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	return d
}

// Close ends every stream and agent goroutine and removes the temporary
// directories the daemon created. It is safe to call more than once.
func (d *Daemon) Close() error {
	d.closeOnce.Do(func() {
		d.mu.Lock()
		d.closed = true
		for _, t := range d.order {
			if t.run != nil {
				t.run.cancel()
			}
		}
		dirs := d.tempDirs
		d.mu.Unlock()
		d.cancel()
		d.wg.Wait()
		for _, dir := range dirs {
			_ = os.RemoveAll(dir)
		}
	})
	return nil
}

// ReleaseSlowTools ends the slow tools held by Options.HoldSlowTools, the
// running ones and later ones alike. It is safe to call more than once.
func (d *Daemon) ReleaseSlowTools() {
	d.releaseOnce.Do(func() { close(d.released) })
}

// ShutdownRequested is closed once a client has called POST /v1/shutdown.
func (d *Daemon) ShutdownRequested() <-chan struct{} { return d.shutdown }

// Server is a daemon listening on a real socket.
type Server struct {
	URL    string // base URL, ending in "/v1"
	d      *Daemon
	srv    *http.Server
	served chan struct{}
	once   sync.Once
	err    error
}

// Start listens on addr ("" = "127.0.0.1:0") and serves the daemon.
func (d *Daemon) Start(addr string) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fakedaemon: listen %s: %w", addr, err)
	}
	s := &Server{
		URL:    "http://" + ln.Addr().String() + "/v1",
		d:      d,
		srv:    &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 10 * time.Second},
		served: make(chan struct{}),
	}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Close stops listening and ends all streams and agent goroutines.
func (s *Server) Close() error {
	s.once.Do(func() {
		// Ending the daemon first makes every stream handler return, so the
		// graceful shutdown below does not wait on open SSE connections.
		_ = s.d.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			s.err = errors.Join(fmt.Errorf("fakedaemon: shutdown: %w", err), s.srv.Close())
		}
		<-s.served
	})
	return s.err
}

// Run is `perch fake-daemon`: it starts a daemon on addr, seeds the demo task
// (or replays replayFile as a task), prints one line and serves until ctx is
// done or a client calls POST /v1/shutdown.
func Run(ctx context.Context, addr string, opts Options, replayFile string, out io.Writer) error {
	return RunScenario(ctx, addr, opts, Scenario{Replay: replayFile}, out)
}

// Scenario is what RunScenario seeds the daemon with: the demo task when
// empty, else a replayed recording or a long session.
type Scenario struct {
	Replay string       // a recorded stream file served as a task
	Long   *LongSession // a long, finished session (see AddLongSession)
	// Prompt is the demo task's first message ("" for the demo's own).
	Prompt string
}

// RunScenario is Run with the choice of seeded task. For a long session the
// line it prints also gives the session's event count, its stream size in
// bytes and the id of its last event.
func RunScenario(ctx context.Context, addr string, opts Options, sc Scenario, out io.Writer) error {
	if sc.Replay != "" && sc.Long != nil {
		return errors.New("fakedaemon: a replay and a long session exclude each other")
	}
	// The task is there before the port is open: a client that was
	// following the id on a daemon that ran there before reconnects to it,
	// never to a daemon without it.
	d := New(opts)
	var id, label string
	switch {
	case sc.Replay != "":
		f, err := os.Open(sc.Replay)
		if err != nil {
			_ = d.Close()
			return fmt.Errorf("fakedaemon: open recording: %w", err)
		}
		id, err = d.LoadRecording(f, "Replay of "+filepath.Base(sc.Replay))
		_ = f.Close()
		if err != nil {
			_ = d.Close()
			return err
		}
		label = "replayed task " + id
	case sc.Long != nil:
		info, err := d.AddLongSession(*sc.Long)
		if err != nil {
			_ = d.Close()
			return err
		}
		label = fmt.Sprintf("long-session task %s; %d events, %d bytes, last event %s", info.TaskID, info.Events, info.Bytes, info.LastEventID)
	default:
		var err error
		if id, err = d.SeedDemoPrompt(sc.Prompt); err != nil {
			_ = d.Close()
			return err
		}
		label = "demo task " + id
	}
	s, err := d.Start(addr)
	if err != nil {
		_ = d.Close()
		return err
	}
	if _, err := fmt.Fprintf(out, "fake maria daemon (%s) listening on %s (%s)\n", d.dialect, s.URL, label); err != nil {
		_ = s.Close()
		return fmt.Errorf("fakedaemon: write banner: %w", err)
	}
	select {
	case <-ctx.Done():
	case <-d.shutdown:
	}
	return s.Close()
}

// ---- helpers shared by the whole package ----

func (d *Daemon) nowMS() int64 { return d.clock().UnixMilli() }

// scaled converts a realistic duration to the configured speed.
func (d *Daemon) scaled(base time.Duration) time.Duration {
	return time.Duration(float64(base) / d.speed)
}

// pause sleeps for a scaled duration; false means ctx ended first.
func (d *Daemon) pause(ctx context.Context, base time.Duration) bool {
	tm := time.NewTimer(d.scaled(base))
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// slowTool waits out the slow tool: its scaled time, or until
// ReleaseSlowTools when held. False means ctx ended first.
func (d *Daemon) slowTool(ctx context.Context) bool {
	if !d.holdSlow {
		return d.pause(ctx, slowToolDelay)
	}
	select {
	case <-d.released:
		return true
	case <-ctx.Done():
		return false
	}
}

// uuidFrom draws a random-looking lowercase UUID v4 from r.
func uuidFrom(r *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// validUUID reports whether s parses as a UUID (8-4-4-4-12 hex digits).
func validUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}

// models is what GET /v1/models lists: the default model first, then a few
// configured extras (one without a provider prefix, as a models.json entry
// would be).
func (d *Daemon) models() []string {
	out := []string{d.model}
	for _, m := range []string{"anthropic/claude-sonnet-4.5", "openai/gpt-4.1", "qwen/qwen3-coder", "local-sonnet"} {
		if m != d.model {
			out = append(out, m)
		}
	}
	return out
}

// resolveModel mirrors §3.3: empty → default; a listed name or any name with
// a provider prefix ("/") resolves; anything else is unknown.
func (d *Daemon) resolveModel(m string) (string, error) {
	if m == "" {
		return d.model, nil
	}
	if strings.Contains(m, "/") {
		return m, nil
	}
	for _, known := range d.models() {
		if known == m {
			return m, nil
		}
	}
	return "", &apiError{status: http.StatusNotFound, body: daemonError(fmt.Sprintf("Model not found: Some(%q)", m), nil),
		msg: "model not found: " + m}
}

// apiError is an HTTP error response prepared by the state layer.
type apiError struct {
	status        int
	body          []byte
	msg           string
	noContentType bool // the resume 409 is sent without Content-Type (§3.9)
}

func (e *apiError) Error() string {
	return fmt.Sprintf("fakedaemon: %d: %s", e.status, e.msg)
}

func notFoundTask(id string) *apiError {
	return &apiError{status: http.StatusNotFound, body: daemonError("Task not found: "+id, nil), msg: "task not found: " + id}
}

func invalidUUID(id string) *apiError {
	return &apiError{status: http.StatusBadRequest, body: daemonError("Invalid UUID: "+id, nil), msg: "invalid UUID: " + id}
}
