package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// idleTask starts a task on a fake daemon and attaches perch to it in a
// terminal (env set before perch), once its first reply is done.
func idleTask(t *testing.T, env string) (*term, string, string) {
	t.Helper()
	url := fakeDaemon(t, "6")
	id := strings.TrimSpace(run(t, "new", "--url", url, "--cwd", t.TempDir(), "Say hello."))
	tm := newTerm(t, fmt.Sprintf("%s %s attach %s --url %s; echo EXITED; sleep 60", env, perch, id, url))
	tm.waitFor("the first reply to finish", 30*time.Second, func(s string) bool { return strings.Contains(s, "✓ idle") })
	return tm, url, id
}

// waitTurn waits until the daemon has received text as a user turn.
func waitTurn(t *testing.T, url, id, text string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if slices.Contains(userTurns(t, url, id), text) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the daemon never received %q: %q", text, userTurns(t, url, id))
}

// Typed over the transcript, "What now" lands whole in the composer (the
// W the transcript does not bind moves focus there) and is sent as typed.
func TestTypingInTheTranscriptReachesTheComposer(t *testing.T) {
	t.Parallel()
	tm, url, id := idleTask(t, "")
	tm.keys("Escape")
	tm.waitText("message (tab to write)", 5*time.Second)
	tm.typeText("What now")
	tm.waitText("› What now", 5*time.Second)
	tm.keys("Enter")
	waitTurn(t, url, id, "What now")
}

// ctrl+o opens $EDITOR on the draft; what it writes becomes the draft.
func TestComposeInEditor(t *testing.T) {
	t.Parallel()
	editor := filepath.Join(t.TempDir(), "editor")
	script := "#!/bin/sh\nprintf ' and more from the editor' >> \"$1\"\n"
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tm, url, id := idleTask(t, "VISUAL= EDITOR="+editor)
	tm.typeText("a draft")
	tm.waitText("› a draft", 5*time.Second)
	tm.keys("C-o")
	tm.waitText("› a draft and more from the editor", 10*time.Second)
	tm.keys("Enter")
	waitTurn(t, url, id, "a draft and more from the editor")
}
