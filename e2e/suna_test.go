package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
)

// fakeSuna serves the fake Suna API in the test process (so the test can
// count what reached it) and returns it with its API base.
func fakeSuna(t *testing.T, opts fakesuna.Options) (*fakesuna.Server, string) {
	t.Helper()
	s := fakesuna.New(opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(ctx, ln)
	}()
	t.Cleanup(func() { cancel(); <-done; s.Close() })
	return s, "http://" + ln.Addr().String() + "/v1"
}

// sunaUserRows counts the thread's user rows holding text, as the fake's
// history has them: what the server received.
func sunaUserRows(t *testing.T, base, thread, text string) int {
	t.Helper()
	resp, err := http.Get(base + "/threads/" + thread + "/messages?optimized=false&order=asc")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Messages []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range body.Messages {
		if m.Type == "user" && strings.Contains(string(m.Content), text) {
			n++
		}
	}
	return n
}

// sunaUserOrder is the texts of the thread's user rows, oldest first.
func sunaUserOrder(t *testing.T, base, thread string) []string {
	t.Helper()
	resp, err := http.Get(base + "/threads/" + thread + "/messages?optimized=false&order=asc")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Messages []struct {
			Type    string `json:"type"`
			Content struct {
				Content string `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range body.Messages {
		if m.Type == "user" {
			out = append(out, m.Content.Content)
		}
	}
	return out
}

// runsOf is the thread's runs, oldest first, and the latest's status.
func runsOf(s *fakesuna.Server, thread string) ([]string, string) {
	for _, th := range s.Threads() {
		if th.ID == thread {
			return th.RunIDs, th.Status
		}
	}
	return nil, ""
}

// waitCond polls cond until it holds.
func waitCond(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lastAfter: on the screen, text appears after marker's last occurrence.
func lastAfter(screen, marker, text string) bool {
	i := strings.LastIndex(screen, marker)
	return i >= 0 && strings.Contains(screen[i:], text)
}

// Attached to a Suna thread with --backend suna: a typed follow-up starts
// one run (one POST /agent/start, one user row) and its reply shows; two
// more typed while that run is going are held (nothing posted) and start
// their own runs one after another once it has ended, each exactly once,
// in order.
func TestSunaFollowUpAndHeldWhileRunning(t *testing.T) {
	t.Parallel()
	// The runs of the follow-ups are held before their end (s.Hold) while
	// the test types and checks, however loaded the machine.
	s, base := fakeSuna(t, fakesuna.Options{FrameDelay: 5 * time.Millisecond})
	thread, _, err := s.Start("", "What is in my workspace?")
	if err != nil {
		t.Fatal(err)
	}
	waitCond(t, "the first run to end", 60*time.Second, func() bool { _, st := runsOf(s, thread); return st == "completed" })

	tm := newTerm(t, fmt.Sprintf("%s attach %s --backend suna --url %s; echo EXITED; sleep 60", perch, thread[:8], base))
	tm.waitFor("the thread, idle and live", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "café ☕ ready") && strings.Contains(s, "✓ idle") && strings.Contains(s, "● live")
	})
	scr := tm.screen()
	if !strings.Contains(scr, "suna") {
		t.Errorf("the status bar does not name the backend:\n%s", scr)
	}

	first := "Which files are biggest?"
	s.Hold()
	tm.typeText(first)
	tm.keys("Enter")
	waitCond(t, "the follow-up to start a run", 20*time.Second, func() bool { return s.Requests("POST /agent/start") == 1 })
	waitCond(t, "the second run", 10*time.Second, func() bool { ids, st := runsOf(s, thread); return len(ids) == 2 && st == "running" })
	tm.waitFor("the run going", 20*time.Second, func(s string) bool { return strings.Contains(s, "generating") })

	// Two more while it runs: both held, nothing posted.
	second, third := "Then summarise notes.md please.", "And list the docs folder."
	tm.typeText(second)
	tm.keys("Enter")
	tm.waitFor("the second follow-up held", 10*time.Second, func(s string) bool {
		return strings.Contains(s, second) && strings.Contains(s, "✎ 1")
	})
	tm.typeText(third)
	tm.keys("Enter")
	tm.waitFor("both follow-ups held", 10*time.Second, func(s string) bool {
		return strings.Contains(s, third) && strings.Contains(s, "✎ 2")
	})
	if n := s.Requests("POST /agent/start"); n != 1 {
		t.Fatalf("%d starts while the run is going, want 1 (the follow-ups must be held)", n)
	}
	if ids, st := runsOf(s, thread); len(ids) != 2 || st != "running" {
		t.Fatalf("runs %v (%s) while follow-ups are held", ids, st)
	}

	// The held ones start their runs one after another, in order: the
	// third only once the second's run has ended (held until then).
	s.Release()
	s.Hold()
	waitCond(t, "the first held follow-up to start its run", 60*time.Second, func() bool { return s.Requests("POST /agent/start") == 2 })
	if ids, st := runsOf(s, thread); len(ids) != 3 || st != "running" {
		t.Fatalf("runs %v (%s) after the first held follow-up went", ids, st)
	}
	s.Release()
	waitCond(t, "the second held follow-up to start its run", 60*time.Second, func() bool { return s.Requests("POST /agent/start") == 3 })
	waitCond(t, "the last run to end", 60*time.Second, func() bool { ids, st := runsOf(s, thread); return len(ids) == 4 && st == "completed" })
	tm.waitFor("the last reply, idle, nothing held", 30*time.Second, func(s string) bool {
		return lastAfter(s, third, "café ☕ ready") && strings.Contains(s, "✓ idle") && !strings.Contains(s, "✎")
	})

	// Each exactly once, in the order typed, whatever happens next.
	time.Sleep(2 * time.Second)
	if n := s.Requests("POST /agent/start"); n != 3 {
		t.Fatalf("%d starts, want 3", n)
	}
	for _, text := range []string{first, second, third} {
		if n := sunaUserRows(t, base, thread, text); n != 1 {
			t.Fatalf("the server has %d user rows %q, want 1", n, text)
		}
	}
	if order := sunaUserOrder(t, base, thread); strings.Join(order, "|") != strings.Join([]string{"What is in my workspace?", first, second, third}, "|") {
		t.Fatalf("user rows in the order %q", order)
	}
}

// perch demo --backend suna opens the TUI on a fake Suna thread whose run
// streams to its end.
func TestDemoSuna(t *testing.T) {
	t.Parallel()
	tm := newTerm(t, perch+" demo --backend suna --speed 4")
	tm.waitText("What is in my workspace?", 20*time.Second)
	tm.waitText("execute_command", 20*time.Second)
	tm.waitFor("the answer, idle", 40*time.Second, func(s string) bool {
		return strings.Contains(s, "café ☕ ready") && strings.Contains(s, "✓ idle") && strings.Contains(s, "suna")
	})
}
