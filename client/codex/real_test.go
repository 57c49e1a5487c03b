package codex

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// realCodex is a running Codex TUI in tmux against the fake provider
// (script capture/tui.json), at its prompt.
type realCodex struct {
	ctx         context.Context
	home, work  string
	tmux        func(args ...string) string
	screenShows func(what string)
}

// startRealCodex starts it, with its app-server daemon (Codex's default)
// or without (--disable daemon_auto_start: the TUI runs the thread and
// holds its lock itself). It skips without codex or tmux unless
// PERCH_E2E_REQUIRED=1.
func startRealCodex(t *testing.T, daemon bool) *realCodex {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the real Codex CLI for ~30 s")
	}
	for _, prog := range []string{"codex", "tmux"} {
		if _, err := exec.LookPath(prog); err != nil {
			if os.Getenv("PERCH_E2E_REQUIRED") == "1" {
				t.Fatalf("%s is not installed (PERCH_E2E_REQUIRED=1)", prog)
			}
			t.Skipf("%s is not installed: npm install -g @openai/codex (see .ci/run)", prog)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	scratch := t.TempDir()
	home, work := filepath.Join(scratch, "home"), filepath.Join(scratch, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// The fake provider.
	fake := filepath.Join(scratch, "fake")
	if out, err := exec.Command("go", "build", "-o", fake, "./testdata/capture").CombinedOutput(); err != nil {
		t.Fatalf("building the fake provider: %v\n%s", err, out)
	}
	script, _ := filepath.Abs("testdata/capture/tui.json")
	prov := exec.Command(fake, "-script", script, "-log", filepath.Join(scratch, "requests.jsonl"))
	stdout, _ := prov.StdoutPipe()
	prov.Stderr = os.Stderr
	if err := prov.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prov.Process.Kill(); prov.Wait() })
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`model = "gpt-5-codex"
model_provider = "fake"
approval_policy = "on-request"
sandbox_mode = "workspace-write"

[model_providers.fake]
name = "fake"
base_url = "http://%s/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 1

[projects.%q]
trust_level = "trusted"
`, strings.TrimSpace(addr), work)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}

	// The TUI, in a tmux server of its own.
	sock := fmt.Sprintf("perch-codex-real-%d-%v", os.Getpid(), daemon)
	tmux := func(args ...string) string {
		out, _ := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		return string(out)
	}
	flags := "--disable daemon_auto_start"
	if daemon {
		flags = ""
		t.Cleanup(func() { stopDaemon(t, home) })
	}
	tmux("new-session", "-d", "-s", "tui", "-x", "160", "-y", "45", "-c", work,
		fmt.Sprintf("env CODEX_HOME=%s FAKE_OPENAI_KEY=dummy codex %s; sleep 600", home, flags))
	t.Cleanup(func() { tmux("kill-server") })
	screenShows := func(what string) {
		t.Helper()
		for ctx.Err() == nil {
			if strings.Contains(tmux("capture-pane", "-p", "-t", "tui"), what) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("the screen never showed %q:\n%s", what, tmux("capture-pane", "-p", "-t", "tui"))
	}
	screenShows("Ask Codex to do anything")
	return &realCodex{ctx: ctx, home: home, work: work, tmux: tmux, screenShows: screenShows}
}

// stopDaemon stops the app-server daemon the TUI started under home, and
// the helper it leaves running (found by home, which is this test's own).
func stopDaemon(t *testing.T, home string) {
	exec.Command("env", "CODEX_HOME="+home, "codex", "app-server", "daemon", "stop").Run()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmd), home+"/") {
			if pid, err := strconv.Atoi(e.Name()); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// TestRealCodex runs the real Codex TUI in tmux against the fake model
// provider of testdata/capture (script capture/tui.json) and watches it
// through OpenLocal: busy → waiting for approval (shown as the union) →
// busy → idle; a follow-up sent through Send while busy and one at idle,
// each delivered once (seen in the rollout); then kill -9 of the Codex
// holding the thread, and the session is exited. It skips without codex
// or tmux unless PERCH_E2E_REQUIRED=1.
func TestRealCodex(t *testing.T) {
	rc := startRealCodex(t, false)
	ctx, home, work, tmux, screenShows := rc.ctx, rc.home, rc.work, rc.tmux, rc.screenShows
	l := open(t, home)
	var mu sync.Mutex
	var list []events.Task
	var seen []string // the states the list went through
	changed := make(chan struct{}, 1)
	go l.WatchSessions(ctx, func(ts []events.Task) {
		mu.Lock()
		list = ts
		if len(ts) == 1 {
			s := ts[0].Status + "/" + ts[0].Detail
			if len(seen) == 0 || seen[len(seen)-1] != s {
				seen = append(seen, s)
			}
		}
		mu.Unlock()
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	state := func() events.Task {
		mu.Lock()
		defer mu.Unlock()
		if len(list) != 1 {
			return events.Task{}
		}
		return list[0]
	}
	waitState := func(what, status string) events.Task {
		t.Helper()
		for {
			if s := state(); s.Status == status && s.Name != "" {
				return s
			}
			select {
			case <-changed:
			case <-ctx.Done():
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("never %s (states so far %v)", what, seen)
			}
		}
	}

	tmux("send-keys", "-t", "tui", "Make a file and run it.")
	time.Sleep(time.Second) // the TUI takes text and Enter apart
	tmux("send-keys", "-t", "tui", "Enter")
	busy := waitState("busy after the prompt", events.StatusGenerating)
	if busy.Name != "Make a file and run it." || busy.Cwd != work {
		t.Errorf("listed as %+v", busy)
	}
	screenShows("Would you like to run the following command?")
	// Waiting for approval: the files cannot tell it from work, and the
	// list says so.
	if s := state(); s.Status != events.StatusGenerating || s.Detail != DetailBusy {
		t.Errorf("while the approval prompt is open: %q (%q)", s.Status, s.Detail)
	}
	tmux("send-keys", "-t", "tui", "y")
	screenShows("sleep 3") // the second command runs
	rec := newRecorder()
	go l.Follow(ctx, busy.ID, rec.on)
	if _, err := l.Send(ctx, busy.ID, client.Message{Text: "follow-up while busy"}); err != nil {
		t.Fatalf("send while busy: %v", err)
	}
	rec.waitFor(t, "the busy follow-up delivered and answered", func(tl *events.Timeline, _ int) bool {
		return hasText(tl, events.ItemAssistant, "Got the follow-up sent while busy.")
	})
	waitState("idle after the follow-up's turn", events.StatusIdle)
	if _, err := l.Send(ctx, busy.ID, client.Message{Text: "follow-up at idle"}); err != nil {
		t.Fatalf("send at idle: %v", err)
	}
	rec.waitFor(t, "the idle follow-up delivered and answered", func(tl *events.Timeline, _ int) bool {
		return hasText(tl, events.ItemAssistant, "Got the follow-up sent at idle.") && tl.Status() == events.RunIdle
	})
	waitState("idle again", events.StatusIdle)

	// kill -9 of the Codex that holds the thread.
	lock := l.lockPath(busy.ID)
	if !heldLocks([]string{lock})[lock] {
		t.Fatal("nobody holds the writer lock of a running session")
	}
	pid := lockHolder(t, lock)
	if err := exec.Command("kill", "-9", pid).Run(); err != nil {
		t.Fatal(err)
	}
	if s := waitState("exited after kill -9", events.StatusExited); s.Detail != DetailExited {
		t.Errorf("after kill -9: %q", s.Detail)
	}
	rec.waitFor(t, "the followed session stopped", func(tl *events.Timeline, _ int) bool { return tl.Status() == events.RunStopped })

	// Each follow-up is in the rollout once.
	tl, _ := rec.timeline()
	count := map[string]int{}
	for _, it := range tl.Items() {
		if it.Kind == events.ItemUser {
			count[it.Text]++
		}
	}
	for _, text := range []string{"Make a file and run it.", "follow-up while busy", "follow-up at idle"} {
		if count[text] != 1 {
			t.Errorf("%q is in the rollout %d times", text, count[text])
		}
	}
	mu.Lock()
	t.Logf("states: %v", seen)
	mu.Unlock()
}

// lockHolder is the pid /proc/locks names for a lock file.
func lockHolder(t *testing.T, lock string) string {
	t.Helper()
	out, err := exec.Command("sh", "-c",
		`ino=$(stat -c %i "$1"); awk -v ino="$ino" '$2 == "FLOCK" { n = split($6, f, ":"); if (f[n] == ino) print $5 }' /proc/locks`,
		"sh", lock).Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("no holder of %s in /proc/locks: %v", lock, err)
	}
	return strings.Fields(string(out))[0]
}

// TestRealCodexDaemon runs the real TUI as Codex runs it by default, with
// its app-server daemon, which owns the thread: the list says "waiting for
// approval" while the approval prompt is open (the daemon's thread
// status), "working" otherwise, and idle after the turn.
func TestRealCodexDaemon(t *testing.T) {
	rc := startRealCodex(t, true)
	l := open(t, rc.home)
	detail := func(want string) {
		t.Helper()
		for rc.ctx.Err() == nil {
			ts, err := l.Sessions(rc.ctx)
			if err == nil && len(ts) == 1 && ts[0].Detail == want {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		ts, _ := l.Sessions(context.Background())
		t.Fatalf("never %q: %+v", want, ts)
	}
	rc.tmux("send-keys", "-t", "tui", "Make a file and run it.")
	time.Sleep(time.Second)
	rc.tmux("send-keys", "-t", "tui", "Enter")
	rc.screenShows("Would you like to run the following command?")
	detail(DetailApproval)
	rc.tmux("send-keys", "-t", "tui", "y")
	rc.screenShows("sleep 3")
	detail(DetailWorking)
	for rc.ctx.Err() == nil {
		if ts, _ := l.Sessions(rc.ctx); len(ts) == 1 && ts[0].Status == events.StatusIdle {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("never idle after the turn")
}
