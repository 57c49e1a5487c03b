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

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/tui"
)

// recordingUI stands in for the terminal UI (Env.openUI): it only notes
// what each command opened it with.
type recordingUI struct {
	mu sync.Mutex
	// calls names each opening: "readonly" for a file, else the system
	// ("maria", "pynchy", ...).
	calls    []string
	cfgs     []tui.Config
	backends []client.Backend
}

func (u *recordingUI) open(_ context.Context, b client.Backend, c tui.Config) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if b == nil && c.Board != nil {
		u.calls, u.cfgs, u.backends = append(u.calls, "board"), append(u.cfgs, c), append(u.backends, b)
		return nil
	}
	kind := b.Name()
	if b.Capabilities().Recording {
		kind = "readonly"
	}
	u.calls, u.cfgs, u.backends = append(u.calls, kind), append(u.cfgs, c), append(u.backends, b)
	return nil
}

// TestUICommandsCheckTheirArguments: usage mistakes, help and printing a
// replay never open the UI.
func TestUICommandsCheckTheirArguments(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.sse")
	if err := os.WriteFile(file, []byte(spoofedRecording), 0o644); err != nil {
		t.Fatal(err)
	}
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
			e.openUI = func(context.Context, client.Backend, tui.Config) error {
				t.Errorf("perch %v opened the UI", c.args)
				return errors.New("no UI here")
			}
		}, "", c.args...)
		if r.code != c.code {
			t.Errorf("perch %v: exit %d, want %d (%q)", c.args, r.code, c.code, r.stderr)
		}
	}
	r := runEnv(context.Background(), t, nil, "", "replay", file, "--format", "jsonl")
	if r.code != 0 || !strings.Contains(r.stdout, "It says hi.") {
		t.Errorf("replay --format jsonl: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestUICommandsOpenTheUI: each UI command hands the UI what it needs. The
// task list maria's probe read is handed over, so the UI need not ask for
// it again; without a probe (--backend maria) there is none.
func TestUICommandsOpenTheUI(t *testing.T) {
	t.Parallel()
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
	with := func(e *Env) { e.openUI, e.IsTerminal = ui.open, true }
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
	if strings.Join(ui.calls, ",") != "maria,maria,readonly,maria" {
		t.Fatalf("calls %v", ui.calls)
	}
	root, attach, replay := ui.cfgs[0], ui.cfgs[1], ui.cfgs[2]
	for i, o := range []tui.Config{root, attach} {
		if len(o.Tasks) != 1 || o.Tasks[0].ID != id {
			t.Errorf("command %d: the probed task list %+v, want the one task %s", i, o.Tasks, id)
		}
	}
	if named := ui.cfgs[3]; named.Tasks != nil || replay.Tasks != nil {
		t.Errorf("a task list without a probe: --backend maria %v, replay %v", named.Tasks, replay.Tasks)
	}
	if root.TaskID != "" || root.Theme != "light" || root.Model != "m1" || root.Outbox == nil || root.Outbox.Store == nil {
		t.Errorf("root options %+v", root)
	}
	// The UI reads the daemon at url.
	if ts, err := ui.backends[0].Sessions(ctx); err != nil || len(ts) != 1 || ts[0].ID != id {
		t.Errorf("root backend's tasks %+v %v, want the one task %s at %s", ts, err, id, url)
	}
	if attach.TaskID != id || attach.Outbox == nil || attach.Outbox.Store == nil {
		t.Errorf("attach options %+v, want task %s", attach, id)
	}
	// The replay is the file, read-only: one session, its events, then
	// nothing more until let go (client/registry tests the rest).
	src := ui.backends[2]
	if c := src.Capabilities(); c.Send || c.Cancel || c.Create {
		t.Errorf("a replay offers %+v", c)
	}
	tasks, err := src.Sessions(ctx)
	if err != nil || len(tasks) != 1 || replay.TaskID != tasks[0].ID || replay.Theme != "dark" || replay.Outbox != nil {
		t.Fatalf("replay: tasks %v %v, options %+v", tasks, err, replay)
	}
	sctx, scancel := context.WithCancel(ctx)
	var texts []string
	done := make(chan error, 1)
	go func() {
		done <- src.Follow(sctx, tasks[0].ID, func(u client.Update) {
			for _, ev := range u.Events {
				if ev.Kind == events.KindAssistantMessage {
					texts = append(texts, ev.Text)
				}
			}
			if u.Synced {
				scancel()
			}
		})
	}()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow: %v", err)
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
	s := &stubBackend{name: client.Pynchy, url: "http://pynchy.test:8484", caps: client.Capabilities{Send: true, PipesFollowUps: true}}
	ui := &recordingUI{}
	stub := withStub(s, t.TempDir(), nil)
	with := func(e *Env) { stub(e); e.openUI, e.IsTerminal = ui.open, true }
	for _, args := range [][]string{
		{"--url", s.url, "--theme", "dark"},
		{"attach", "chat-b", "--backend", "pynchy", "--url", s.url},
	} {
		must(t, stubRun(t, with, args...))
	}
	if strings.Join(ui.calls, ",") != "pynchy,pynchy" {
		t.Fatalf("calls %v", ui.calls)
	}
	root, attach := ui.cfgs[0], ui.cfgs[1]
	if root.TaskID != "" || root.Theme != "dark" || root.Outbox == nil || root.Outbox.Store == nil {
		t.Errorf("root options %+v", root)
	}
	if attach.TaskID != "chat-bob" || attach.Outbox == nil || attach.Outbox.Store == nil {
		t.Errorf("attach options %+v", attach)
	}
	// Both show the stub's sessions.
	for i, b := range ui.backends {
		if ts, err := b.Sessions(context.Background()); err != nil || len(ts) != 2 || ts[0].ID != "chat-alice" {
			t.Errorf("opening %d shows %+v %v, want the stub's sessions", i, ts, err)
		}
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
	t.Parallel()
	ui := &recordingUI{}
	with := func(e *Env) { e.openUI, e.IsTerminal = ui.open, true }
	must(t, stubRun(t, with, "demo", "--backend", "suna", "--speed", "50"))
	if strings.Join(ui.calls, ",") != client.Suna || ui.cfgs[0].TaskID == "" {
		t.Fatalf("demo opened %v with %+v", ui.calls, ui.cfgs)
	}
}
