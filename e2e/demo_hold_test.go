package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// perch demo says on its screen how to hold a message for its session
// from another terminal; a message held so shows in the demo's held panel
// and the demo delivers it once the agent is idle.
func TestDemoTakesHeldMessagesFromAnotherTerminal(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"maria", "suna", "pynchy"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			demoHold(t, backend)
		})
	}
}

func demoHold(t *testing.T, backend string) {
	tm := newTerm(t, perch+" demo --speed 20 --backend "+backend)
	s := tm.waitFor("the demo's instructions", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "never after the demo") && strings.Contains(s, "perch send")
	})
	flat := strings.Join(strings.Fields(s), " ")
	m := regexp.MustCompile(`XDG_STATE_HOME=(\S+) perch send (\S+) --hold --url (\S+) `).FindStringSubmatch(flat)
	if m == nil {
		t.Fatalf("no ready perch send line on screen:\n%s", s)
	}
	dir, id, url := m[1], m[2], m[3]

	const text = "Also check the README for typos."
	cmd := exec.Command(perch, "send", id, "--hold", "--url", url, text)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("perch send --hold from another terminal: %v: %s", err, out)
	}
	// Shown held (or already on its way, if the agent was idle), then
	// delivered: the daemon has it as a user turn, once.
	tm.waitText("Also check the README", 20*time.Second)
	deadline := time.Now().Add(60 * time.Second)
	for {
		turns := userTurns(t, url, id)
		if n := len(slices.DeleteFunc(turns, func(s string) bool { return s != text })); n == 1 {
			break
		} else if n > 1 {
			t.Fatalf("delivered %d times: %q", n, turns)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo did not deliver the held message; the daemon has %q", turns)
		}
		time.Sleep(200 * time.Millisecond)
	}
	q := exec.Command(perch, "queue", id, "--url", url)
	q.Env = append(os.Environ(), "XDG_STATE_HOME="+dir)
	out, err := q.CombinedOutput()
	if err != nil || strings.Contains(string(out), text) {
		t.Errorf("perch queue after delivery: %v\n%s", err, out)
	}
}
