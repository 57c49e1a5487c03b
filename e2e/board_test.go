package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/fakedaemon"
)

// TestBoardNotifiesAndReorders: perch on two maria daemons opens the
// board; while a session of the first is open, a session of the second
// finishes: the terminal gets the notification (BEL, OSC 9 and OSC 777,
// naming the session), and back on the board (esc) that session comes
// first with an unread mark.
func TestBoardNotifiesAndReorders(t *testing.T) {
	t.Parallel()
	alpha := fakedaemon.New(fakedaemon.Options{Speed: 6, Seed: 3})
	asrv, err := alpha.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { asrv.Close() })
	beta, burl := heldDaemon(t)
	if _, err := alpha.CreateTask(fakedaemon.CreateRequest{Name: "open-me", Cwd: t.TempDir(), Message: "Say hello."}); err != nil {
		t.Fatal(err)
	}
	if _, err := beta.CreateTask(fakedaemon.CreateRequest{Name: "bench-run", Cwd: t.TempDir(), Message: "Run the slow benchmark please."}); err != nil {
		t.Fatal(err)
	}

	home := t.TempDir() // no local daemon to discover, the test's own config file
	conf := filepath.Join(home, "config")
	if err := os.MkdirAll(filepath.Join(conf, "perch"), 0o700); err != nil {
		t.Fatal(err)
	}
	toml := fmt.Sprintf("[[source]]\nname = \"alpha\"\nurl = %q\nbackend = \"maria\"\n\n[[source]]\nname = \"beta\"\nurl = %q\nbackend = \"maria\"\n", asrv.URL, burl)
	if err := os.WriteFile(filepath.Join(conf, "perch", "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(t.TempDir(), "raw")
	tm := newTerm(t, fmt.Sprintf("env HOME=%s XDG_CONFIG_HOME=%s %s", home, conf, perch))
	// Everything perch writes to its terminal, byte for byte.
	tm.tmux("pipe-pane", "-t", "main", "-o", "cat >> "+raw)

	tm.waitFor("both sources' sessions on the board", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "board") && strings.Contains(s, "open-me") && strings.Contains(s, "bench-run") &&
			strings.Contains(s, "2/2 sources live")
	})
	// The benchmark holds bench-run's run; open-me's run ends.
	tm.waitFor("open-me's run to end", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "✓ open-me") && strings.Contains(s, "● bench-run")
	})
	tm.keys("/")
	tm.typeText("open-me")
	tm.keys("Enter") // the one match opens
	tm.waitText("Say hello.", 20*time.Second)

	// From here on, what the terminal gets while open-me is on screen
	// (open-me's own run ended on the board, which may have rung).
	before, _ := os.ReadFile(raw)
	beta.ReleaseSlowTools() // bench-run's run ends while open-me is on screen
	notified := func() string {
		b, _ := os.ReadFile(raw)
		return string(b[len(before):])
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(notified(), "777;notify;perch: bench-run (beta)") {
		if time.Now().After(deadline) {
			t.Fatalf("no notification of bench-run reached the terminal; it got %q", tail(notified(), 2000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	out := notified()
	for _, part := range []string{"\a", "]9;perch: bench-run (beta): a reply you have not seen", "]777;notify;perch: bench-run (beta);a reply you have not seen"} {
		if !strings.Contains(out, part) {
			t.Fatalf("the notification lacks %q: %q", part, tail(out, 2000))
		}
	}
	if strings.Contains(out, "perch: open-me") {
		t.Fatalf("the session on screen rang: %q", tail(out, 2000))
	}

	tm.keys("Escape") // the transcript
	tm.waitText("esc tasks", 10*time.Second)
	tm.keys("Escape") // the board, as it was left: filtered
	tm.waitText("filter: open-me", 10*time.Second)
	tm.keys("Escape") // clears the filter
	s := tm.waitFor("bench-run first on the board, unread", 20*time.Second, func(s string) bool {
		for _, line := range strings.Split(s, "\n") {
			if strings.Contains(line, "bench-run") || strings.Contains(line, "open-me") {
				return strings.Contains(line, "bench-run") && strings.Contains(line, "◆") && strings.Contains(line, "new reply")
			}
		}
		return false
	})
	if !strings.Contains(s, "1 need you") {
		t.Fatalf("the board does not count what needs you:\n%s", s)
	}
	if title := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "main", "#{pane_title}")); title != "perch (1 need you)" {
		t.Fatalf("window title %q", title)
	}
	tm.keys("q")
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
