package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/fakedaemon"
	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
)

// These are the tmux tests of "delivered exactly once, to the right
// session": a follow-up typed on a Suna thread after a held message's run
// is delivered, and a resume of auto-delivery from another shell delivers
// a held message to an idle task within a second, once, however many
// perches are attached.

// newTermAs is newTerm with a name of its own, for a test that runs more
// than one terminal.
func newTermAs(t *testing.T, name, command string) *term {
	t.Helper()
	tm := &term{t: t, sock: fmt.Sprintf("perch-e2e-%d-%s-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"), name)}
	tm.tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "main", "-e", "TERM=xterm-256color",
		"-e", "XDG_STATE_HOME="+stateDir(t), command)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen of %s at failure:\n%s", name, tm.screen())
		}
		_ = tm.kill()
	})
	return tm
}

func (tm *term) kill() error {
	return exec.Command("tmux", "-L", tm.sock, "kill-server").Run()
}

// neverDaemonWords fails the test if the screen says the daemon does not
// answer while it does.
func neverDaemonWords(t *testing.T, s string) {
	t.Helper()
	if strings.Contains(s, "delivered when the daemon answers") {
		t.Fatalf("the screen says the daemon does not answer while it does:\n%s", s)
	}
}

// On a Suna thread: A starts a run; B, typed while it runs, is held and
// starts its own run once A's has ended; then, on the idle thread, C is
// typed: C starts a run and its reply shows. Before the fix, C stayed
// "sent, not delivered yet · delivered when the daemon answers": the
// Deliverer still kept the pause of B's run, long over.
func TestSunaFollowUpAfterHeldRunIsDelivered(t *testing.T) {
	t.Parallel()
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

	a, b, c := "Alpha: which files are biggest?", "Bravo: then summarise notes.md.", "Charlie: and list the docs folder."
	s.Hold() // A's run is held before its end while B is typed
	tm.typeText(a)
	tm.keys("Enter")
	waitCond(t, "A to start a run", 20*time.Second, func() bool { return s.Requests("POST /agent/start") == 1 })
	tm.waitFor("A's run going", 20*time.Second, func(s string) bool { return strings.Contains(s, "generating") })

	tm.typeText(b)
	tm.keys("Enter")
	scr := tm.waitFor("B held while A runs", 10*time.Second, func(s string) bool {
		return strings.Contains(s, b) && strings.Contains(s, "✎ 1")
	})
	neverDaemonWords(t, scr)
	if n := s.Requests("POST /agent/start"); n != 1 {
		t.Fatalf("%d starts while A runs, want 1 (B must be held)", n)
	}

	s.Release()
	waitCond(t, "B to start its run after A's", 60*time.Second, func() bool { return s.Requests("POST /agent/start") == 2 })
	waitCond(t, "B's run to end", 60*time.Second, func() bool { ids, st := runsOf(s, thread); return len(ids) == 3 && st == "completed" })
	tm.waitFor("B's reply, the thread idle, nothing held", 30*time.Second, func(s string) bool {
		return lastAfter(s, b, "café ☕ ready") && strings.Contains(s, "✓ idle") && !strings.Contains(s, "✎")
	})

	// Well past the settle time (a user types later): C goes at once and
	// its reply shows.
	time.Sleep(2 * time.Second)
	tm.typeText(c)
	tm.keys("Enter")
	// Within seconds, never said to wait for a daemon that answers.
	deadline := time.Now().Add(10 * time.Second)
	for s.Requests("POST /agent/start") < 3 {
		scr := tm.screen()
		neverDaemonWords(t, scr)
		if time.Now().After(deadline) {
			t.Fatalf("C was not delivered to the idle thread:\n%s", scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitCond(t, "C's run to end", 60*time.Second, func() bool { ids, st := runsOf(s, thread); return len(ids) == 4 && st == "completed" })
	scr = tm.waitFor("C's reply, idle, nothing held", 30*time.Second, func(s string) bool {
		return lastAfter(s, c, "café ☕ ready") && strings.Contains(s, "✓ idle") && !strings.Contains(s, "✎")
	})
	neverDaemonWords(t, scr)

	time.Sleep(time.Second)
	if n := s.Requests("POST /agent/start"); n != 3 {
		t.Fatalf("%d starts, want 3", n)
	}
	for _, text := range []string{a, b, c} {
		if n := sunaUserRows(t, base, thread, text); n != 1 {
			t.Fatalf("the server has %d user rows %q, want 1", n, text)
		}
	}
}

// A held message on a paused task, two perches attached to it, idle:
// `perch queue T --resume` from another shell delivers it within a second,
// exactly once.
func TestResumeFromAnotherShellDeliversOnce(t *testing.T) {
	t.Parallel()
	d := fakedaemon.New(fakedaemon.Options{Speed: 6, Seed: 7})
	srv, err := d.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); d.Close() })
	url := srv.URL
	id := strings.TrimSpace(run(t, "new", "--url", url, "--cwd", t.TempDir(), "Say hello."))
	waitCond(t, "the first reply to end", 30*time.Second, func() bool {
		return strings.Contains(run(t, "tasks", "--url", url), "idle")
	})

	text := "Xray: waits for the resume."
	run(t, "queue", id, "--url", url, "--pause")
	run(t, "send", id, text, "--hold", "--url", url)

	one := newTermAs(t, "one", fmt.Sprintf("%s attach %s --url %s", perch, id, url))
	two := newTermAs(t, "two", fmt.Sprintf("%s attach %s --url %s", perch, id, url))
	for _, tm := range []*term{one, two} {
		tm.waitFor("the task idle, its message held and paused", 30*time.Second, func(s string) bool {
			return strings.Contains(s, "✓ idle") && strings.Contains(s, "⏸ 1 held") && strings.Contains(s, text)
		})
	}
	// Well past the settle time: paused, nothing goes.
	time.Sleep(2 * time.Second)
	if got := d.Received(id); slices.Contains(got, text) {
		t.Fatalf("delivered while paused: %q", got)
	}

	run(t, "queue", id, "--url", url, "--resume")
	resumed := time.Now()
	waitCond(t, "the held message delivered", 10*time.Second, func() bool { return slices.Contains(d.Received(id), text) })
	took := time.Since(resumed)
	t.Logf("delivered %v after the resume", took)
	if took > time.Second {
		t.Errorf("delivered %v after the resume, want within a second", took)
	}
	for _, tm := range []*term{one, two} {
		tm.waitFor("the panel empty", 20*time.Second, func(s string) bool { return !strings.Contains(s, "⏸") && !strings.Contains(s, "✎") })
	}
	time.Sleep(2 * time.Second)
	n := 0
	for _, r := range d.Received(id) {
		if r == text {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the daemon received %q %d times, want once: %q", text, n, d.Received(id))
	}
}
