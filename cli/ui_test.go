package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/backend"
	mariab "github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// recordingUI is a UI that only notes how it was opened.
type recordingUI struct {
	mu    sync.Mutex
	calls []string
	opts  []UIOptions
	live  []*mariab.Client
	src   []ReadOnlySource
	// backends: what Backend was handed.
	backends []backend.Backend
	// prepared counts Prepare calls; calls notes them as "prepare".
	prepared int
}

func (u *recordingUI) Prepare() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.prepared++
	u.calls = append(u.calls, "prepare")
}

func (u *recordingUI) Live(_ context.Context, cl *mariab.Client, o UIOptions) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls, u.opts, u.live = append(u.calls, "live"), append(u.opts, o), append(u.live, cl)
	return nil
}

func (u *recordingUI) Backend(_ context.Context, b backend.Backend, o UIOptions) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls, u.opts, u.backends = append(u.calls, "backend"), append(u.opts, o), append(u.backends, b)
	return nil
}

func (u *recordingUI) ReadOnly(_ context.Context, src ReadOnlySource, o UIOptions) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls, u.opts, u.src = append(u.calls, "readonly"), append(u.opts, o), append(u.src, src)
	return nil
}

// TestUICommandsWithoutUI: a perch without the UI hands each UI command
// over (Env.StartUI) once its arguments are checked and before it touches
// the network or reads a file; what StartUI says when it cannot is the
// command's error, exit 1. Without StartUI either, the commands say there
// is no UI.
func TestUICommandsWithoutUI(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.sse")
	if err := os.WriteFile(file, []byte(spoofedRecording), 0o644); err != nil {
		t.Fatal(err)
	}
	unreachable := "http://127.0.0.1:1/v1" // nothing listens: the hand-over comes first
	uiCommands := [][]string{
		{"--url", unreachable},
		{"attach", "3f2b", "--url", unreachable},
		{"demo"},
		{"demo", "--backend", "suna"},
		{"replay", file},
		{"replay", filepath.Join(t.TempDir(), "missing.sse")}, // perch-ui reads the file, not perch
	}
	for _, args := range uiCommands {
		r := runEnv(context.Background(), t, func(e *Env) { e.IsTerminal = true }, "", args...)
		if r.code != ExitFailure || !strings.Contains(r.stderr, "this perch has no terminal UI") {
			t.Errorf("perch %v without StartUI: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	errMissing := errors.New("perch-ui not found (looked here)")
	for _, args := range uiCommands {
		calls := 0
		r := runEnv(context.Background(), t, func(e *Env) {
			e.IsTerminal = true
			e.StartUI = func(...string) error { calls++; return errMissing }
		}, "", args...)
		if calls != 1 || r.code != ExitFailure || strings.TrimSpace(r.stderr) != "perch: "+errMissing.Error() {
			t.Errorf("perch %v: StartUI called %d times, exit %d, stderr %q", args, calls, r.code, r.stderr)
		}
	}
	// Usage mistakes, help and printing a replay stay in perch.
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"attach"}, ExitUsage},
		{[]string{"demo", "--theme", "purple"}, ExitUsage},
		{[]string{"attach", "--help"}, ExitOK},
		{[]string{"replay", file, "--format", "jsonl"}, ExitOK},
	} {
		r := runEnv(context.Background(), t, func(e *Env) {
			e.IsTerminal = true
			e.StartUI = func(...string) error { t.Errorf("perch %v handed over", c.args); return errMissing }
		}, "", c.args...)
		if r.code != c.code {
			t.Errorf("perch %v: exit %d, want %d (%q)", c.args, r.code, c.code, r.stderr)
		}
	}
	r := runEnv(context.Background(), t, nil, "", "replay", file, "--format", "jsonl")
	if r.code != 0 || !strings.Contains(r.stdout, "It says hi.") {
		t.Errorf("replay --format jsonl without a UI: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestUICommandsOpenTheUI: each UI command hands the UI what it needs, and
// lets it prepare before anything else (the probe). The task list maria's
// probe read is handed over, so the UI need not ask for it again; without
// a probe (--backend maria) there is none.
func TestUICommandsOpenTheUI(t *testing.T) {
	d, url := fake(t, "head", 50)
	id, err := d.SeedDemo()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "s.sse")
	if err := os.WriteFile(file, []byte(spoofedRecording), 0o644); err != nil {
		t.Fatal(err)
	}
	ui := &recordingUI{}
	with := func(e *Env) { e.UI, e.IsTerminal = ui, true }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"--url", url, "--theme", "light", "--model", "m1"},
		{"attach", id[:8], "--url", url},
		{"replay", file, "--theme", "dark"},
		{"--url", url, "--backend", "maria"},
	} {
		must(t, runEnv(ctx, t, with, "", args...))
	}
	if strings.Join(ui.calls, ",") != "prepare,live,prepare,live,prepare,readonly,prepare,live" {
		t.Fatalf("calls %v", ui.calls)
	}
	root, attach, replay := ui.opts[0], ui.opts[1], ui.opts[2]
	for i, o := range []UIOptions{root, attach} {
		if len(o.Tasks) != 1 || o.Tasks[0].ID != id {
			t.Errorf("command %d: the probed task list %+v, want the one task %s", i, o.Tasks, id)
		}
	}
	if named := ui.opts[3]; named.Tasks != nil || replay.Tasks != nil {
		t.Errorf("a task list without a probe: --backend maria %v, replay %v", named.Tasks, replay.Tasks)
	}
	if root.TaskID != "" || root.Theme != "light" || root.Model != "m1" || root.OutboxStore == nil || root.OutboxBackend == nil {
		t.Errorf("root options %+v", root)
	}
	if !strings.HasPrefix(ui.live[0].BaseURL(), url) {
		t.Errorf("root client %s, want %s", ui.live[0].BaseURL(), url)
	}
	if attach.TaskID != id || attach.OutboxStore == nil {
		t.Errorf("attach options %+v, want task %s", attach, id)
	}
	src := ui.src[0]
	tasks, err := src.Tasks(ctx)
	if err != nil || len(tasks) != 1 || replay.TaskID != tasks[0].ID || replay.Theme != "dark" || replay.OutboxStore != nil {
		t.Fatalf("replay: tasks %v %v, options %+v", tasks, err, replay)
	}
	if !strings.Contains(src.Note(), "read-only") {
		t.Errorf("note %q", src.Note())
	}
	// The source hands over the file's events, then stays until let go.
	sctx, scancel := context.WithCancel(ctx)
	var texts []string
	done := make(chan error, 1)
	go func() {
		done <- src.StreamTaskEvents(sctx, tasks[0].ID, func(ev events.Event) {
			if ev.Kind == events.KindAssistantMessage {
				texts = append(texts, ev.Text)
			}
		}, func(sse.ConnState) {})
	}()
	scancel()
	if err := <-done; err != nil {
		t.Errorf("StreamTaskEvents: %v", err)
	}
	if !strings.Contains(strings.Join(texts, "|"), "It says hi.") {
		t.Errorf("replayed texts %q", texts)
	}
}

// TestUICommandsThroughABackend: perch and perch attach hand a backend
// other than maria to the UI (probed or named), with the outbox perch send
// and queue use for that server; maria's daemon stays on its own path; the
// demo of another backend serves it in this process.
func TestUICommandsThroughABackend(t *testing.T) {
	s := &stubBackend{name: backend.Pynchy, url: "http://pynchy.test:8484", caps: backend.Capabilities{Send: true, PipesFollowUps: true}}
	ui := &recordingUI{}
	stub := withStub(s, t.TempDir(), nil)
	with := func(e *Env) { stub(e); e.UI, e.IsTerminal = ui, true }
	for _, args := range [][]string{
		{"--url", s.url, "--theme", "dark"},
		{"attach", "chat-b", "--backend", "pynchy", "--url", s.url},
	} {
		must(t, stubRun(t, with, args...))
	}
	if strings.Join(ui.calls, ",") != "prepare,backend,prepare,backend" {
		t.Fatalf("calls %v", ui.calls)
	}
	root, attach := ui.opts[0], ui.opts[1]
	if root.TaskID != "" || root.Theme != "dark" || root.OutboxStore == nil || root.OutboxBackend == nil || ui.backends[0] != s {
		t.Errorf("root options %+v, backend %v", root, ui.backends[0])
	}
	if attach.TaskID != "chat-bob" || attach.OutboxStore == nil || ui.backends[1] != s {
		t.Errorf("attach options %+v", attach)
	}
	if r := stubRun(t, with, "attach", "nobody", "--backend", "pynchy", "--url", s.url); r.code == 0 || !strings.Contains(r.stderr, "nobody") {
		t.Errorf("attach to a missing session: exit %d, %q", r.code, r.stderr)
	}
	if r := stubRun(t, with, "demo", "--backend", "attocode"); r.code != ExitUsage {
		t.Errorf("demo --backend attocode: exit %d, %q", r.code, r.stderr)
	}
}

// TestDemoSunaOpensTheUI: perch demo --backend suna serves a fake Suna
// API in this process and opens the UI on its demo thread.
func TestDemoSunaOpensTheUI(t *testing.T) {
	ui := &recordingUI{}
	with := func(e *Env) { e.UI, e.IsTerminal = ui, true }
	must(t, stubRun(t, with, "demo", "--backend", "suna", "--speed", "50"))
	if len(ui.backends) != 1 || ui.backends[0].Name() != backend.Suna || ui.opts[0].TaskID == "" {
		t.Fatalf("demo opened %v with %+v", ui.calls, ui.opts)
	}
}
