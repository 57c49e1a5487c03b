// Package e2e runs the built perch binary in a real terminal (tmux) against
// the fake daemon, as a person would use it.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/internal/testpar"
)

var perch string // the built binary

// stateDirs is each test's XDG_STATE_HOME (perch's outbox), shared by the
// perch in its terminal and the commands it runs.
var stateDirs sync.Map

func stateDir(t *testing.T) string {
	t.Helper()
	if d, ok := stateDirs.Load(t.Name()); ok {
		return d.(string)
	}
	d := t.TempDir()
	stateDirs.Store(t.Name(), d)
	t.Cleanup(func() { stateDirs.Delete(t.Name()) })
	return d
}

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("PERCH_E2E_REQUIRED") != "" {
			fmt.Fprintln(os.Stderr, "e2e: tmux is required (PERCH_E2E_REQUIRED is set) but not installed")
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "e2e: tmux not installed; skipping end-to-end tests (bash .ci/run installs it)")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "perch-e2e")
	if err != nil {
		panic(err)
	}
	perch = filepath.Join(dir, "perch")
	// Never the user's own state directory, whatever a test forgets.
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	// Built pure Go (CGO_ENABLED=0), as go install builds it without a
	// C compiler.
	build := exec.Command("go", "build", "-o", perch, "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build failed:", err)
		os.Exit(1)
	}
	// The tests wait on terminals and fakes, not the CPU: six at once.
	testpar.Raise(6)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// term is one tmux server with one 120×40 window running a command.
type term struct {
	t    *testing.T
	sock string
}

func newTerm(t *testing.T, command string) *term {
	t.Helper()
	tm := &term{t: t, sock: fmt.Sprintf("perch-e2e-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))}
	tm.tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "main", "-e", "TERM=xterm-256color",
		"-e", "XDG_STATE_HOME="+stateDir(t), command)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen at failure:\n%s", tm.screen())
		}
		exec.Command("tmux", "-L", tm.sock, "kill-server").Run()
	})
	return tm
}

func (tm *term) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

func (tm *term) screen() string {
	out, _ := exec.Command("tmux", "-L", tm.sock, "capture-pane", "-p", "-t", "main").CombinedOutput()
	return string(out)
}

// keys sends tmux key names (Enter, C-x, Tab …).
func (tm *term) keys(keys ...string) {
	tm.tmux(append([]string{"send-keys", "-t", "main"}, keys...)...)
}

// typeText sends literal text.
func (tm *term) typeText(s string) { tm.tmux("send-keys", "-t", "main", "-l", s) }

// waitFor polls the screen until ok says yes.
func (tm *term) waitFor(what string, timeout time.Duration, ok func(screen string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	var s string
	for time.Now().Before(deadline) {
		s = tm.screen()
		if ok(s) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	tm.t.Fatalf("timed out waiting for %s", what)
	return s
}

func (tm *term) waitText(text string, timeout time.Duration) string {
	tm.t.Helper()
	return tm.waitFor(fmt.Sprintf("%q on screen", text), timeout, func(s string) bool { return strings.Contains(s, text) })
}

// fakeDaemon runs `perch fake-daemon` as its own process.
func fakeDaemon(t *testing.T, speed string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, perch, "fake-daemon", "--addr", "127.0.0.1:0", "--speed", speed)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("fake daemon printed nothing: %v", err)
	}
	m := regexp.MustCompile(`http://\S+/v1`).FindString(line)
	if m == "" {
		t.Fatalf("no URL in %q", line)
	}
	return m
}

// heldDaemon serves the fake daemon in the test process, its slow tool
// (the benchmark) held until d.ReleaseSlowTools, so that the test acts
// while it runs however long typing takes on a loaded machine.
func heldDaemon(t *testing.T) (*fakedaemon.Daemon, string) {
	t.Helper()
	d := fakedaemon.New(fakedaemon.Options{Speed: 6, Seed: 7, HoldSlowTools: true})
	srv, err := d.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return d, srv.URL
}

func run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(perch, args...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+stateDir(t))
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("perch %v: %v: %s", args, err, msg)
	}
	return string(out)
}

// userTurns returns the user texts the daemon turned into UserMessage
// events, i.e. exactly what it received and consumed.
func userTurns(t *testing.T, url, id string) []string {
	t.Helper()
	var texts []string
	for _, line := range strings.Split(run(t, "export", id, "--url", url, "--format", "jsonl"), "\n") {
		var r struct{ Type, Text string }
		if json.Unmarshal([]byte(line), &r) == nil && r.Type == "user" {
			texts = append(texts, r.Text)
		}
	}
	return texts
}

// waitTurns waits until the daemon's user turns are exactly want: what it
// received and consumed, in order.
func waitTurns(t *testing.T, url, id string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		turns := userTurns(t, url, id)
		if strings.Join(turns, "\x00") == strings.Join(want, "\x00") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon received %q, want %q", turns, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestDemoShowsConversation(t *testing.T) {
	t.Parallel()
	tm := newTerm(t, perch+" demo --speed 4")
	tm.waitText("What does this project do?", 20*time.Second)
	tm.waitText("list_files", 20*time.Second)
	s := tm.waitText("make build", 30*time.Second)
	if !strings.Contains(s, "go test") {
		t.Errorf("the passing test run is not shown:\n%s", s)
	}
	// The run ends idle, and q quits cleanly.
	tm.waitFor("idle status", 40*time.Second, func(s string) bool { return strings.Contains(strings.ToLower(s), "idle") })
}

func TestSendFollowUpAndReply(t *testing.T) {
	t.Parallel()
	url := fakeDaemon(t, "6")
	id := strings.TrimSpace(run(t, "new", "--url", url, "--cwd", t.TempDir(), "Say hello."))
	tm := newTerm(t, fmt.Sprintf("%s attach %s --url %s", perch, id, url))
	tm.waitText("Say hello.", 15*time.Second)
	tm.waitFor("the first reply to finish", 20*time.Second, func(s string) bool { return strings.Contains(strings.ToLower(s), "idle") })

	msg := "Please read the README and summarise it."
	tm.typeText(msg)
	tm.keys("Enter")
	// The daemon received exactly that text.
	waitTurns(t, url, id, "Say hello.", msg)
	// And the reply appears: the README was read.
	tm.waitText("read_file", 20*time.Second)
	tm.waitText("README.md", 20*time.Second)
}

func TestQueuedWhileBusyThenInTranscript(t *testing.T) {
	t.Parallel()
	d, url := heldDaemon(t)
	id := strings.TrimSpace(run(t, "new", "--url", url, "--cwd", t.TempDir(), "Run the slow benchmark please."))
	tm := newTerm(t, fmt.Sprintf("%s attach %s --url %s", perch, id, url))
	tm.waitText("go test -bench", 20*time.Second)

	queued := "Also add a CHANGELOG entry."
	tm.typeText(queued)
	tm.keys("Enter")
	// It shows in the queue at once…
	tm.waitFor("the queued message in the queue panel", 5*time.Second, func(s string) bool {
		return strings.Contains(s, queued) && strings.Contains(s, "⧗ 1 queued")
	})
	d.ReleaseSlowTools()
	// …and then, consumed by the agent, as a user turn with its reply.
	tm.waitText("write_to_file", 30*time.Second)
	s := tm.waitFor("the queue to empty", 20*time.Second, func(s string) bool {
		return !strings.Contains(s, "⧗")
	})
	if !strings.Contains(s, queued) {
		t.Fatalf("queued message not in the transcript:\n%s", s)
	}
	if turns := userTurns(t, url, id); len(turns) != 2 || turns[1] != queued {
		t.Fatalf("daemon turns %q", turns)
	}
}

func TestCancelRecoversQueuedText(t *testing.T) {
	t.Parallel()
	_, url := heldDaemon(t)
	id := strings.TrimSpace(run(t, "new", "--url", url, "--cwd", t.TempDir(), "Run the slow benchmark please."))
	tm := newTerm(t, fmt.Sprintf("%s attach %s --url %s", perch, id, url))
	tm.waitText("go test -bench", 30*time.Second)

	text := "Then tell me a joke about compilers"
	tm.typeText(text)
	tm.keys("Enter")
	tm.waitFor("the queued message in the queue panel", 5*time.Second, func(s string) bool {
		return strings.Contains(s, text) && strings.Contains(s, "⧗ 1 queued")
	})
	tm.typeText("half typed")
	tm.waitText("› half typed", 5*time.Second)
	tm.keys("C-x")
	tm.waitFor("the cancel confirmation", 5*time.Second, func(s string) bool { return strings.Contains(strings.ToLower(s), "cancel the run?") })
	tm.keys("y")
	// The run is cancelled; the queued text comes back as a held message
	// (auto-delivery paused), the composer keeps what was typed.
	tm.waitText("cancelled", 10*time.Second)
	s := tm.waitText("⏸ 1 held", 10*time.Second)
	if !strings.Contains(s, text) || !strings.Contains(s, "› half typed") {
		t.Fatalf("the recovered text is not held, or the composer lost its text:\n%s", s)
	}
	if strings.Contains(s, "⧗") {
		t.Fatalf("queue panel still shown after cancel:\n%s", s)
	}
	if turns := userTurns(t, url, id); len(turns) != 1 {
		t.Fatalf("the cancelled message reached the agent: %q", turns)
	}
	// Sending it now from the held panel delivers it.
	tm.keys("BTab")
	tm.keys("s")
	waitTurns(t, url, id, "Run the slow benchmark please.", text)
}

func TestTaskListAndBack(t *testing.T) {
	t.Parallel()
	url := fakeDaemon(t, "6")
	id := strings.TrimSpace(run(t, "new", "--url", url, "--cwd", t.TempDir(), "--name", "e2e list task", "Say hello."))
	tm := newTerm(t, fmt.Sprintf("%s --url %s", perch, url))
	tm.waitText("e2e list task", 15*time.Second)
	// Filter down to our task and open it.
	tm.keys("/")
	tm.typeText("e2e list")
	tm.keys("Enter")
	tm.keys("Enter")
	tm.waitText("Say hello.", 15*time.Second)
	// Esc goes back to the list.
	tm.keys("Escape")
	tm.waitText("e2e list task", 10*time.Second)
	_ = id
}
