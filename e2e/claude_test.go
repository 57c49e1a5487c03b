package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// claudeCLI finds the real Claude Code CLI; without it the test skips
// with a message, unless PERCH_E2E_REQUIRED is set (CI installs it from
// npm: .ci/run).
func claudeCLI(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("claude")
	if err != nil {
		if os.Getenv("PERCH_E2E_REQUIRED") != "" {
			t.Fatal("the claude CLI is required (PERCH_E2E_REQUIRED is set) but not on PATH: npm install -g @anthropic-ai/claude-code@2.1.332")
		}
		t.Skip("the claude CLI is not installed (npm install -g @anthropic-ai/claude-code@2.1.332); skipping")
	}
	return p
}

// TestLocalClaudeCode runs the real Claude Code in one terminal against a
// fake Anthropic API (client/claudecode/testdata/capture) and perch's
// board in another: the session shows idle, generating, waiting on its
// permission prompt (needs you), generating and idle again as the CLI
// goes through them; a follow-up sent by perch at idle and one sent while
// busy are each taken once (their receipts in the transcript, the fake
// provider answering each); kill -9 shows as exited.
func TestLocalClaudeCode(t *testing.T) {
	t.Parallel()
	claude := claudeCLI(t)
	base := t.TempDir()
	home, work := filepath.Join(base, "home"), filepath.Join(base, "work")
	conf := filepath.Join(home, ".claude")
	for _, d := range []string{conf, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	fake := filepath.Join(base, "fake")
	build := exec.Command("go", "build", "-o", fake, "../client/claudecode/testdata/capture/main.go")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the fake provider: %v: %s", err, out)
	}
	portFile, requests := filepath.Join(base, "port"), filepath.Join(base, "requests.jsonl")
	provider := exec.Command(fake, "-addr", "127.0.0.1:0", "-port-file", portFile, "-cwd", work, "-log", requests)
	if err := provider.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { provider.Process.Kill(); provider.Wait() })
	var port string
	waitUntil(t, "the fake provider's port", 10*time.Second, func() bool {
		b, _ := os.ReadFile(portFile)
		port = strings.TrimSpace(string(b))
		return port != ""
	})
	seed := fmt.Sprintf(`{"hasCompletedOnboarding":true,"lastOnboardingVersion":"2.1.332","theme":"dark","customApiKeyResponses":{"approved":["dummy"],"rejected":[]},"projects":{%q:{"hasTrustDialogAccepted":true,"hasCompletedProjectOnboarding":true,"allowedTools":[]}}}`, work)
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(seed), 0o600); err != nil {
		t.Fatal(err)
	}

	cli := &term{t: t, sock: fmt.Sprintf("perch-e2e-%d-claude-cli", os.Getpid())}
	cli.tmux("new-session", "-d", "-x", "150", "-y", "40", "-s", "main",
		fmt.Sprintf("cd %s && env -i PATH=%s HOME=%s TERM=xterm-256color ANTHROPIC_BASE_URL=http://127.0.0.1:%s ANTHROPIC_API_KEY=dummy "+
			"DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 %s --model claude-sonnet-4-5-20250929; sleep 600",
			work, os.Getenv("PATH"), home, port, claude))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the CLI's screen at failure:\n%s", cli.screen())
		}
		exec.Command("tmux", "-L", cli.sock, "kill-server").Run()
	})

	// perch's board: no daemon, no config: the local CLI is its source.
	board := newTerm(t, fmt.Sprintf("env HOME=%s %s", home, perch))
	perchRun := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(perch, args...)
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+stateDir(t), "CLAUDE_CONFIG_DIR=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("perch %v: %v: %s", args, err, out)
		}
		return string(out)
	}

	registry := func() map[string]any {
		files, _ := filepath.Glob(filepath.Join(conf, "sessions", "*.json"))
		for _, f := range files {
			var r map[string]any
			if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &r) == nil {
				return r
			}
		}
		return nil
	}
	status := func(want string) {
		t.Helper()
		waitUntil(t, "the CLI's registry to say "+want, 60*time.Second, func() bool {
			r := registry()
			return r != nil && r["status"] == want
		})
	}
	// boardSays waits for the board's row of the session to show word.
	boardSays := func(word string) {
		t.Helper()
		board.waitFor("the board to show the session "+word, 10*time.Second, func(s string) bool {
			for _, line := range strings.Split(s, "\n") {
				if strings.Contains(line, word) && (strings.Contains(line, "Walk through") || strings.Contains(line, "work")) {
					return true
				}
			}
			return false
		})
	}

	status("idle")
	id, _ := registry()["sessionId"].(string)
	if id == "" {
		t.Fatal("no session id in the registry file")
	}
	boardSays("idle")
	cli.keys("-l", "Walk through the live states.")
	cli.keys("Enter")
	status("busy")
	boardSays("generating")
	status("waiting")
	boardSays("waiting")
	board.waitText("asks your permission", 10*time.Second)
	var listed struct {
		Sessions []struct{ ID, Status, Reason string }
	}
	out := perchRun("tasks", "--all", "--json")
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed.Sessions) != 1 ||
		listed.Sessions[0].ID != id || listed.Sessions[0].Status != "waiting" || listed.Sessions[0].Reason != "permission" {
		t.Errorf("tasks --all while the prompt is open (%v):\n%s", err, out)
	}
	cli.keys("Enter") // allow
	status("busy")
	status("idle")
	boardSays("idle")

	// perch attach by a prefix of the id follows the session live.
	attach := &term{t: t, sock: fmt.Sprintf("perch-e2e-%d-claude-attach", os.Getpid())}
	attach.tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "main", "-e", "TERM=xterm-256color",
		"-e", "XDG_STATE_HOME="+stateDir(t), fmt.Sprintf("env HOME=%s CLAUDE_CONFIG_DIR= %s attach %s", home, perch, id[:8]))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("perch attach's screen at failure:\n%s", attach.screen())
		}
		exec.Command("tmux", "-L", attach.sock, "kill-server").Run()
	})
	attach.waitText("Made the file.", 20*time.Second)

	transcript := filepath.Join(conf, "projects", strings.NewReplacer("/", "-", ".", "-", "_", "-").Replace(work), id+".jsonl")
	first, second := "First follow-up, sent at idle.", "Second follow-up, sent while busy."
	// The first from the composer of perch attach, the second with perch
	// send while the CLI works on the first.
	attach.typeText(first)
	attach.keys("Enter")
	status("busy")
	perchRun("send", id, second)
	attach.waitText("Got the first follow-up.", 30*time.Second)
	attach.waitText("Got the second follow-up.", 30*time.Second)
	status("idle")
	// Each taken once: one enqueue receipt of each text in the transcript.
	counts := map[string]int{}
	f, err := os.Open(transcript)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var q struct{ Type, Operation, Content string }
		if json.Unmarshal(sc.Bytes(), &q) == nil && q.Type == "queue-operation" && q.Operation == "enqueue" {
			counts[q.Content]++
		}
	}
	f.Close()
	if counts[first] != 1 || counts[second] != 1 || len(counts) != 2 {
		t.Errorf("enqueued %v, want each follow-up once", counts)
	}

	pid, _ := registry()["pid"].(float64)
	if pid <= 0 {
		t.Fatal("no pid in the registry file")
	}
	if err := exec.Command("kill", "-9", fmt.Sprint(int(pid))).Run(); err != nil {
		t.Fatal(err)
	}
	boardSays("exited")
	if registry() == nil {
		t.Error("the test expects kill -9 to leave the registry file behind")
	}
}

func waitUntil(t *testing.T, what string, within time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
