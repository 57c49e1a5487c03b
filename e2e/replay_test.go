package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestReplayEverySystem opens a transcript file of each system in the
// terminal UI: the conversation shows, the view says it is read-only, and
// no key offers an action a file cannot do.
func TestReplayEverySystem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file, want string
	}{
		{"maria", "../client/maria/testdata/streams/stream_a.head.sse", "wordfreq"},
		{"suna", "../client/suna/testdata/stream_run.sse", "one folder was unreadable"},
		{"pynchy", "../client/pynchy/testdata/stream_basic.sse", "There are 7 Go files."},
		{"attocode", "../client/attocode/testdata/fixtures/store.db", "not a change of my instructions"},
		{"anthropic", "../client/anthropic/testdata/stream.sse", "sunny in Paris"},
		{"claude-code", "../client/claudecode/testdata/session.stream.jsonl", "all 12 checkout tests pass"},
		{"openai", "../client/openai/testdata/stream.sse", "Both files say hello."},
		{"codex", "../client/codex/testdata/exec.jsonl", "the tests pass now"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tm := newTerm(t, perch+" replay "+c.file)
			s := tm.waitText(c.want, 15*time.Second)
			if !strings.Contains(s, "read-only") {
				t.Fatalf("the view does not say it is read-only:\n%s", s)
			}
			// tab would focus a composer: a replay has none.
			tm.keys("Tab")
			tm.keys("?")
			s = tm.waitText("transcript: move", 5*time.Second)
			if strings.Contains(s, "composer") || strings.Contains(s, "cancel run") {
				t.Fatalf("help offers actions a replay cannot do:\n%s", s)
			}
			tm.keys("Escape")
			// Esc and q sent at once would read as alt+q.
			tm.waitFor("the help to close", 5*time.Second, func(s string) bool { return !strings.Contains(s, "transcript: move") })
			tm.keys("q")
			tm.waitFor("perch to exit", 10*time.Second, func(s string) bool { return !strings.Contains(s, "read-only") })
		})
	}
}

// TestSQLiteStore: perch prints an Attocode store (a SQLite database) as
// it prints any transcript file.
func TestSQLiteStore(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"import", "../client/attocode/testdata/fixtures/store.db", "--format", "md"},
		{"replay", "../client/attocode/testdata/fixtures/store.db", "--format", "jsonl"},
	} {
		cmd := exec.Command(perch, args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), "not a change of my instructions") {
			t.Errorf("perch %v: %v, stderr %q, stdout:\n%.600s", args, err, stderr.String(), out)
		}
	}
}
