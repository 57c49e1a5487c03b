package cli

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// cutBackend is a stub whose session's stream brings a finished run, then
// fails for good before the session is read to its end.
type cutBackend struct{ stubBackend }

func (c *cutBackend) Follow(ctx context.Context, id string, on func(client.Update)) error {
	on(client.Update{Events: []events.Event{
		{Kind: events.KindUserMessage, ID: "u1", Text: "first question"},
		{Kind: events.KindAssistantMessage, ID: "a1", Text: "first answer"},
		{Kind: events.KindPostConversation},
		{Kind: events.KindUserMessage, ID: "u2", Text: "second question"},
	}})
	return errors.New("the session was deleted")
}

// TestExportCutShortEndsItsTranscript: an export whose stream fails after
// items went out (export writes each run once it ended) closes the
// transcript with a notice that it is incomplete, so that what was
// written parses, and exits non-zero saying why.
func TestExportCutShortEndsItsTranscript(t *testing.T) {
	t.Parallel()
	s := &cutBackend{stubBackend{name: client.Pynchy, url: "http://pynchy.test:8484"}}
	r := stubRun(t, withStub(s, t.TempDir(), nil), "export", "chat-alice", "--url", s.url, "--format", "jsonl")
	if r.code == 0 || !strings.Contains(r.stderr, "the session was deleted") {
		t.Fatalf("exit %d, stderr %q: want a failure that says why", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	want := []string{`"text":"first question"`, `"text":"first answer"`, `"text":"second question"`,
		`"type":"notice","level":"error"`, `"type":"state"`}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), r.stdout)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d %s lacks %s", i+1, lines[i], w)
		}
	}
	if !strings.Contains(lines[3], "incomplete") {
		t.Errorf("the last notice does not say the transcript is incomplete: %s", lines[3])
	}
}
