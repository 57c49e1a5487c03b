package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/internal/testproxy"
)

// heldID is the local id of the held message with that text.
func heldID(t *testing.T, url, task, text string) string {
	t.Helper()
	var q struct {
		Held []struct{ ID, Text string } `json:"held"`
	}
	out := run(t, "queue", task, "--json", "--url", url)
	if err := json.Unmarshal([]byte(out), &q); err != nil {
		t.Fatalf("queue --json: %v: %s", err, out)
	}
	for _, h := range q.Held {
		if h.Text == text {
			return h.ID
		}
	}
	t.Fatalf("no held message %q in %s", text, out)
	return ""
}

// stillTurns checks, a while later, that the daemon got nothing more.
func stillTurns(t *testing.T, url, id string, want ...string) {
	t.Helper()
	time.Sleep(2 * time.Second)
	if got := userTurns(t, url, id); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("daemon received %q, want %q", got, want)
	}
}

// Four messages held in the TUI, one edited there, one reordered, one
// deleted, one edited from the command line (the TUI shows it): once the
// task is idle after its next turn they are delivered in the new order,
// one turn each, each exactly once. At exit perch says what it keeps.
func TestHeldMessagesInTheTUI(t *testing.T) {
	t.Parallel()
	url := fakeDaemon(t, "6")
	id := strings.TrimSpace(run(t, "new", "--url", url, "--cwd", t.TempDir(), "Say hello."))
	tm := newTerm(t, fmt.Sprintf("%s attach %s --url %s; echo EXITED; sleep 60", perch, id, url))
	tm.waitFor("the first reply to finish", 30*time.Second, func(s string) bool { return strings.Contains(s, "✓ idle") })
	// Past the moment it became idle (when held messages would go).
	time.Sleep(2 * time.Second)

	for i, text := range []string{"first", "second", "third", "fourth"} {
		tm.typeText(text)
		tm.keys("C-g")
		tm.waitText(fmt.Sprintf("✎ %d held", i+1), 5*time.Second)
	}
	// Held on an idle task: nothing goes until it has worked again.
	stillTurns(t, url, id, "Say hello.")

	// Edit the second in place (through the composer).
	tm.keys("BTab")
	tm.waitText("› 1. [", 5*time.Second)
	tm.keys("j")
	tm.waitText("› 2. [", 5*time.Second)
	tm.keys("e")
	tm.waitText("editing held message", 5*time.Second)
	tm.keys("End")
	tm.typeText(", edited")
	tm.keys("Enter")
	tm.waitText("] second, edited", 5*time.Second)

	// Move it to the front; delete the third.
	tm.keys("BTab")
	tm.waitText("› 2. [", 5*time.Second)
	tm.keys("K")
	tm.waitFor("the edited message first", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "› 1. [") && strings.Index(s, "second, edited") < strings.Index(s, "] first")
	})
	tm.keys("j", "j")
	tm.waitText("› 3. [", 5*time.Second)
	tm.keys("d")
	tm.waitFor("the third deleted", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "✎ 3 held") && !strings.Contains(s, "] third")
	})

	// A change from the command line shows within a second or so.
	fourth := heldID(t, url, id, "fourth")
	run(t, "queue", id, "--url", url, "--edit", fourth, "fourth, from the command line")
	tm.waitText("fourth, from the command line", 3*time.Second)
	stillTurns(t, url, id, "Say hello.")

	// A turn of its own; when it ends, the held messages go one per turn.
	tm.keys("Escape")
	tm.waitText("── message · enter sends", 5*time.Second) // esc alone, not alt+g
	tm.typeText("go")
	tm.keys("Enter")
	want := []string{"Say hello.", "go", "second, edited", "first", "fourth, from the command line"}
	waitTurns(t, url, id, want...)
	tm.waitFor("the panel to empty", 20*time.Second, func(s string) bool { return !strings.Contains(s, "held") })
	stillTurns(t, url, id, want...)

	// Held now, kept at exit, and said so.
	tm.typeText("for tomorrow")
	tm.keys("C-g")
	tm.waitText("✎ 1 held", 5*time.Second)
	tm.keys("Tab", "q")
	s := tm.waitText("EXITED", 10*time.Second)
	if !strings.Contains(s, "perch keeps 1 message for task "+id[:8]) {
		t.Fatalf("exit report:\n%s", s)
	}
	if got := heldID(t, url, id, "for tomorrow"); got == "" {
		t.Fatal("not kept")
	}
}

// Messages sent in the TUI while the daemon is down stay, with the reason,
// and are delivered once it is back on the same port, each exactly once,
// in order.
func TestSendWhileDaemonDownInTheTUI(t *testing.T) {
	t.Parallel()
	url := fakeDaemon(t, "6")
	id := strings.TrimSpace(run(t, "new", "--url", url, "--cwd", t.TempDir(), "Say hello."))
	u, err := urlHost(url)
	if err != nil {
		t.Fatal(err)
	}
	p := &testproxy.TCP{Addr: "127.0.0.1:0", Target: u}
	p.Start(t)
	defer func() { p.Stop() }()
	purl := "http://" + p.Addr + "/v1"
	tm := newTerm(t, fmt.Sprintf("%s attach %s --url %s", perch, id, purl))
	tm.waitFor("the first reply to finish", 30*time.Second, func(s string) bool { return strings.Contains(s, "✓ idle") })

	p.Stop() // the daemon goes away
	tm.waitText("retrying in", 10*time.Second)
	for _, text := range []string{"one while down", "two while down"} {
		tm.typeText(text)
		tm.keys("Enter")
		tm.waitText("↻ "+text, 10*time.Second)
	}
	s := tm.waitText("not delivered", 5*time.Second)
	if !strings.Contains(s, "sent, not delivered yet") {
		t.Fatalf("held panel:\n%s", s)
	}
	if got := userTurns(t, url, id); len(got) != 1 {
		t.Fatalf("delivered while down: %q", got)
	}

	p.Start(t) // back on the same port
	want := []string{"Say hello.", "one while down", "two while down"}
	waitTurns(t, url, id, want...)
	tm.waitFor("the panel to empty", 20*time.Second, func(s string) bool { return !strings.Contains(s, "while down") || !strings.Contains(s, "↻") })
	stillTurns(t, url, id, want...)
}

func urlHost(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	return u.Host, nil
}

// A held message belongs to its session, forever: the fake daemon
// restarts and gives the task's id to a new task. perch shows the message
// as an orphan (in perch tasks, the task list and the task that has the
// id now), delivers it nowhere by itself, and once the user moves it to
// another session in the TUI it goes there, exactly once.
func TestOrphanAfterARestartMovedToAnotherSession(t *testing.T) {
	t.Parallel()
	d1 := fakedaemon.New(fakedaemon.Options{Speed: 6, Seed: 21})
	srv1, err := d1.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := srv1.URL
	idleTasks := func(n int) func() bool {
		return func() bool { return strings.Count(run(t, "tasks", "--url", url), " idle ") == n }
	}
	id := strings.TrimSpace(run(t, "new", "--url", url, "--cwd", t.TempDir(), "Say hello."))
	waitCond(t, "the first task idle", 30*time.Second, idleTasks(1))
	text := "Yankee: written for the first session."
	run(t, "send", id, text, "--hold", "--url", url)
	if err := srv1.Close(); err != nil {
		t.Fatal(err)
	}

	// The restart: same address, same seed (so the same ids), an hour
	// later by its clock.
	d2 := fakedaemon.New(fakedaemon.Options{Speed: 6, Seed: 21, Clock: func() time.Time { return time.Now().Add(time.Hour) }})
	// The port was just let go: another test's connection may hold it as
	// its own end for a moment, so the bind is tried again until it is
	// free.
	var srv2 *fakedaemon.Server
	waitCond(t, "the daemon's port free again", 10*time.Second, func() bool {
		srv2, err = d2.Start(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/v1"))
		return err == nil
	})
	t.Cleanup(func() { srv2.Close() })
	if again := strings.TrimSpace(run(t, "new", "--url", url, "--cwd", t.TempDir(), "Say hello.")); again != id {
		t.Fatalf("the restarted daemon gave id %s, want the reused %s", again, id)
	}
	waitCond(t, "the new task with the old id idle", 30*time.Second, idleTasks(1))
	other := strings.TrimSpace(run(t, "new", "--url", url, "--cwd", t.TempDir(), "Say hi again."))
	waitCond(t, "both tasks idle", 30*time.Second, idleTasks(2))
	if out := run(t, "tasks", "--url", url); !strings.Contains(out, "1 (1 orphan)") {
		t.Fatalf("perch tasks does not count the orphan:\n%s", out)
	}

	tm := newTerm(t, fmt.Sprintf("%s --url %s", perch, url))
	tm.waitFor("the orphan counted in the list", 30*time.Second, func(s string) bool { return strings.Contains(s, "∅1") })
	// The list is newest first: the task with the old id is second.
	tm.keys("j")
	tm.keys("Enter")
	tm.waitFor("the orphan in the held panel of the task that has its id now", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "✓ idle") && strings.Contains(s, "∅ orphan") && strings.Contains(s, "1 orphaned (their session is gone")
	})
	time.Sleep(2 * time.Second) // well past the settle time of the idle task
	if slices.Contains(d2.Received(id), text) {
		t.Fatalf("the orphan was delivered to the new task with its id: %q", d2.Received(id))
	}

	tm.keys("Escape") // from the composer to the transcript
	tm.waitFor("the transcript's keys", 10*time.Second, func(s string) bool { return strings.Contains(s, "j/k scroll") })
	tm.keys("Escape") // to the list
	tm.waitFor("the list", 10*time.Second, func(s string) bool { return strings.Contains(s, "perch · tasks") })
	tm.keys("g", "Enter") // the other task, the newest
	tm.waitFor("the other task, told of the orphan", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "✓ idle") && strings.Contains(s, "∅ orphan of session")
	})
	tm.keys("BTab")
	tm.waitFor("the orphan listed", 10*time.Second, func(s string) bool { return strings.Contains(s, text) })
	tm.keys("m")
	tm.waitFor("the orphan held for this session", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "✎ 1 held") && !strings.Contains(s, "∅")
	})
	tm.keys("s")
	waitCond(t, "the moved message delivered to the other task", 10*time.Second, func() bool {
		return slices.Contains(d2.Received(other), text)
	})
	time.Sleep(2 * time.Second)
	n := 0
	for _, r := range d2.Received(other) {
		if r == text {
			n++
		}
	}
	if n != 1 || slices.Contains(d2.Received(id), text) {
		t.Fatalf("received: other task %q, the task with the old id %q; want the message once, in the other", d2.Received(other), d2.Received(id))
	}
}
