package e2e

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	fakepynchy "github.com/perch-tui/perch/fakedaemon/pynchy"
)

// fakePynchy serves a fake pynchy in the test process (so the test can
// count what reached it) and returns it with its URL.
func fakePynchy(t *testing.T, opts fakepynchy.Options) (*fakepynchy.Server, string) {
	t.Helper()
	s := fakepynchy.New(opts)
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
	t.Cleanup(func() { cancel(); <-done; _ = s.Close() })
	return s, "http://" + ln.Addr().String()
}

// Attached to a pynchy chat with --backend pynchy: a typed follow-up
// reaches the server once and its reply shows; one typed while the agent
// works is piped into the run and shown queued until the agent read it;
// no cancel key is offered (pynchy has no cancel endpoint), not even in the
// help, and ctrl+x asks nothing.
func TestPynchyFollowUpQueuedNoCancel(t *testing.T) {
	t.Parallel()
	const chat = "tui:main"
	s, base := fakePynchy(t, fakepynchy.Options{StepDelay: 150 * time.Millisecond})
	if err := s.Say(chat, "What is in this repository?"); err != nil {
		t.Fatal(err)
	}
	waitCond(t, "the first run to end", 30*time.Second, func() bool { return s.Sends(chat) == 1 && !s.Active(chat) })

	tm := newTerm(t, fmt.Sprintf("%s attach %s --backend pynchy --url %s; echo EXITED; sleep 60", perch, chat, base))
	tm.waitFor("the chat, idle and live", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "Here is what I found for What is in this repository?") &&
			strings.Contains(s, "✓ idle") && strings.Contains(s, "● live") && strings.Contains(s, "pynchy")
	})

	first := "Which file is the biggest?"
	tm.typeText(first)
	tm.keys("Enter")
	waitCond(t, "the follow-up at the server", 20*time.Second, func() bool { return s.Sends(chat) == 2 })
	tm.waitFor("the agent working", 20*time.Second, func(s string) bool { return strings.Contains(s, "generating") })
	// Held between two steps, so the queued state can be seen for sure.
	s.Hold()
	if scr := tm.screen(); strings.Contains(scr, "cancel run") || strings.Contains(scr, "ctrl+x") {
		t.Fatalf("a cancel key is offered on pynchy:\n%s", scr)
	}
	tm.keys("C-x")
	tm.keys("F1")
	help := tm.waitText("close help", 5*time.Second)
	if strings.Contains(help, "cancel run") || strings.Contains(help, "cancel the run?") {
		t.Fatalf("the help or a question offers to cancel on pynchy:\n%s", help)
	}
	tm.keys("Escape")
	// The help closed before typing (an escape right before a letter
	// reads as alt+letter).
	tm.waitFor("the help closed", 5*time.Second, func(s string) bool { return !strings.Contains(s, "close help") })
	time.Sleep(300 * time.Millisecond)

	piped := "Also count the lines, please."
	tm.typeText(piped)
	tm.keys("Enter")
	waitCond(t, "the piped follow-up at the server", 20*time.Second, func() bool { return s.Sends(chat) == 3 })
	tm.waitFor("the piped follow-up shown queued", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "⧗ 1 queued") && strings.Contains(s, piped)
	})
	s.Release()

	// The agent reads it: the queue empties, the reply says so.
	tm.waitFor("the run's reply, the queue empty, idle", 40*time.Second, func(scr string) bool {
		return strings.Contains(scr, "Here is what I found for "+first) &&
			strings.Contains(scr, `You also said: "`+piped+`"`) &&
			!strings.Contains(scr, "⧗") && strings.Contains(scr, "✓ idle")
	})
	time.Sleep(2 * time.Second)
	if n := s.Sends(chat); n != 3 {
		t.Fatalf("the chat received %d messages, want 3 (each follow-up exactly once)", n)
	}
}

// perch demo --backend pynchy opens the TUI on a fake pynchy chat whose
// run goes to its end, with its cost.
func TestDemoPynchy(t *testing.T) {
	t.Parallel()
	tm := newTerm(t, perch+" demo --backend pynchy --speed 4")
	tm.waitText("What is in this repository?", 20*time.Second)
	tm.waitFor("the answer, idle", 40*time.Second, func(s string) bool {
		return strings.Contains(s, "Here is what I found") && strings.Contains(s, "✓ idle") &&
			strings.Contains(s, "pynchy") && strings.Contains(s, "$")
	})
}
