package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSearchAllSessionsOpensAHit: in a replay of one file, ctrl+f searches
// the index (here a real Claude Code capture), enter opens the newest hit,
// a session the UI's list does not hold, from its file, read-only, with
// the matching message selected; esc goes back to the list it came from.
// Before perch index ran, the overlay says to run it.
func TestSearchAllSessionsOpensAHit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := os.ReadFile("../client/claudecode/testdata/real/tools.session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "tools.session.jsonl")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}

	tm := newTerm(t, perch+" replay ../client/codex/testdata/exec.jsonl")
	tm.waitText("the tests pass now", 15*time.Second)
	tm.keys("Escape")
	tm.waitText("ctrl+f search all", 5*time.Second)
	tm.keys("C-f")
	tm.waitText("search all sessions", 5*time.Second)
	tm.typeText("gamma")
	tm.keys("Enter")
	tm.waitText("run perch index", 5*time.Second)

	run(t, "index", file)
	tm.keys("Enter") // the same query again
	s := tm.waitText("3 hits, newest first", 5*time.Second)
	if !strings.Contains(s, "claude-code") {
		t.Fatalf("no hit of the capture:\n%s", s)
	}
	tm.keys("Enter")
	s = tm.waitText("replay of tools.session.jsonl (claude-code)", 10*time.Second)
	// The newest hit is the last reply: selected (its gutter) and in view.
	tm.waitText("item 18/18", 5*time.Second)
	if !strings.Contains(s, "┃ notes.txt now reads alpha and gamma") {
		s = tm.screen()
		if !strings.Contains(s, "┃ notes.txt now reads alpha and gamma") {
			t.Fatalf("the hit is not selected:\n%s", s)
		}
	}
	// esc clears the transcript search the hit ran, then goes back.
	tm.waitText("next/prev", 10*time.Second)
	tm.keys("Escape")
	tm.waitFor("the search to clear", 5*time.Second, func(s string) bool { return !strings.Contains(s, "next/prev") })
	tm.keys("Escape")
	s = tm.waitText("exec.jsonl (codex)", 5*time.Second)
	if strings.Contains(s, "tools.session.jsonl") {
		t.Fatalf("the replayed session joined the list:\n%s", s)
	}
}

// With an index, the terminal UI on one server keeps it current: a run
// that ends while the task list is open is found by perch search, with no
// perch index run after it.
func TestTaskListKeepsTheIndex(t *testing.T) {
	t.Parallel()
	url := fakeDaemon(t, "6")
	run(t, "index", "../client/codex/testdata/exec.jsonl") // an index to keep
	run(t, "new", "--url", url, "--cwd", t.TempDir(), "--name", "e2e warm-up task", "Say hello.")
	tm := newTerm(t, perch+" --url "+url)
	tm.waitText("e2e warm-up task", 15*time.Second)
	run(t, "new", "--url", url, "--cwd", t.TempDir(), "--name", "e2e indexed task", "Which tests are flaky here?")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(run(t, "search", "flaky", "--role", "user"), "Which tests are flaky here?") {
		if time.Now().After(deadline) {
			t.Fatalf("the run never reached the index while the task list was open:\n%s", tm.screen())
		}
		time.Sleep(200 * time.Millisecond)
	}
	tm.keys("q")
}
