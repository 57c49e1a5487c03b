package e2e

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// startFakeDaemonAt runs `perch fake-daemon` on addr as its own process,
// to be killed by the test.
func startFakeDaemonAt(t *testing.T, addr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(perch, "fake-daemon", "--addr", addr, "--speed", "6")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("fake daemon printed nothing: %v", err)
	}
	return cmd
}

// The fake daemon is killed while perch is attached to a task: the status
// bar and the composer say disconnected and retrying, with the reason
// (connection refused), never the last state as if it were now. A daemon
// comes back on the same port without that task: perch says the task is
// gone, and the task list is live again.
func TestDaemonKilledWhileAttached(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	daemon := startFakeDaemonAt(t, addr)
	url := "http://" + addr + "/v1"
	id := strings.TrimSpace(run(t, "new", "--url", url, "--cwd", t.TempDir(), "Say hello."))

	tm := newTerm(t, fmt.Sprintf("%s attach %s --url %s", perch, id, url))
	tm.waitFor("the first reply to finish, live", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "✓ idle") && strings.Contains(s, "● live")
	})

	daemon.Process.Kill() // the daemon dies
	daemon.Wait()
	// The first break is the stream's end (unexpected EOF); the retries
	// after it are refused.
	s := tm.waitFor("disconnected, retrying and why, in the status bar and the composer", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "⟳ disconnected · retrying in") && strings.Contains(s, "· connection refused") &&
			strings.Contains(s, "Disconnected — retrying in") && strings.Contains(s, "(connection refused)")
	})
	if strings.Contains(s, "● live") || strings.Contains(s, "Message the agent") {
		t.Errorf("a dead daemon is shown live:\n%s", s)
	}

	startFakeDaemonAt(t, addr) // a daemon is back, without the task
	s = tm.waitFor("the task to be gone", 40*time.Second, func(s string) bool {
		return strings.Contains(s, "✗ task gone") && strings.Contains(s, "Task gone")
	})
	if strings.Contains(s, "retrying") {
		t.Errorf("still retrying once the daemon answered:\n%s", s)
	}
	tm.keys("Escape") // the transcript
	tm.waitText("esc tasks", 10*time.Second)
	tm.keys("Escape") // the task list
	tm.waitFor("the task list, live", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "perch · tasks") && strings.Contains(s, "● live")
	})
}
