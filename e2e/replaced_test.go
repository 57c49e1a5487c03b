package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuf is a bytes.Buffer a command writes while the test reads it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// demoDaemonAt runs `perch fake-daemon` on addr seeding the demo task with
// prompt ("" for the demo's own) and returns the process and the task id.
// A port just let go may be another test's connection's own end for a
// moment: a daemon that could not listen is started again until it can.
func demoDaemonAt(t *testing.T, addr, prompt string) (*exec.Cmd, string) {
	t.Helper()
	args := []string{"fake-daemon", "--addr", addr, "--speed", "20"}
	if prompt != "" {
		args = append(args, "--prompt", prompt)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		cmd := exec.Command(perch, args...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var errb syncBuf
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			cmd.Wait()
			if strings.Contains(errb.String(), "address already in use") && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			t.Fatalf("fake daemon printed nothing: %v\n%s", err, errb.String())
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		id := regexp.MustCompile(`demo task (\S+)\)`).FindStringSubmatch(line)
		if id == nil {
			t.Fatalf("no task id in %q", line)
		}
		return cmd, id[1]
	}
}

// The daemon restarts while perch is attached and gives the task's id to
// a new task (the fake daemon's ids come from its seed). The transcript
// is the new task's, after a notice that says the session was replaced —
// never the old history with the new run's texts stitched on — and a
// `perch tail` that was following says the same, as does an export.
func TestReplacedSessionIsNeverStitched(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	daemon, id := demoDaemonAt(t, addr, "")
	url := "http://" + addr + "/v1"

	tm := newTerm(t, fmt.Sprintf("%s attach %s --url %s", perch, id, url))
	tm.waitFor("the demo run to finish, live", 60*time.Second, func(s string) bool {
		return strings.Contains(s, "✓ idle") && strings.Contains(s, "● live")
	})
	var tail syncBuf
	tailCmd := exec.Command(perch, "tail", id, "--url", url)
	tailCmd.Env = append(os.Environ(), "XDG_STATE_HOME="+stateDir(t))
	tailCmd.Stdout, tailCmd.Stderr = &tail, &tail
	if err := tailCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tailCmd.Process.Kill(); tailCmd.Wait() })
	waitOut(t, "tail to print the old task", &tail, "plan the fix")

	daemon.Process.Kill()
	daemon.Wait()
	const newPrompt = "Only say hello."
	_, id2 := demoDaemonAt(t, addr, newPrompt)
	if id2 != id {
		t.Skipf("the fake daemon gave another id (%s, not %s): nothing to test", id2, id)
	}

	s := tm.waitFor("the notice and the new task's run", 60*time.Second, func(s string) bool {
		return strings.Contains(s, "was replaced") && strings.Contains(s, newPrompt) && strings.Contains(s, "✓ idle")
	})
	if strings.Contains(s, "plan the fix") {
		t.Errorf("the old task's history is still on screen:\n%s", s)
	}
	tm.keys("Escape", "g") // the top of the transcript: the notice, then the new task
	top := tm.waitText("was replaced", 10*time.Second)
	if strings.Contains(top, "plan the fix") || strings.Contains(top, "wordfreq") {
		t.Errorf("the old task's history is kept above the new one:\n%s", top)
	}

	out := waitOut(t, "tail to say the session was replaced and show the new one", &tail, "was replaced", newPrompt)
	after := out[strings.Index(out, "was replaced"):]
	if strings.Contains(after, "plan the fix") || !strings.Contains(after, newPrompt) {
		t.Errorf("tail stitched the two tasks:\n%s", out)
	}

	md := run(t, "export", id, "--url", url, "--format", "md")
	if !strings.Contains(md, newPrompt) || strings.Contains(md, "plan the fix") {
		t.Errorf("export is not the new task's:\n%s", md)
	}
}

// waitOut waits until out holds every one of texts and returns it.
func waitOut(t *testing.T, what string, out *syncBuf, texts ...string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := out.String()
		all := true
		for _, x := range texts {
			all = all && strings.Contains(s, x)
		}
		if all {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; output:\n%s", what, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
