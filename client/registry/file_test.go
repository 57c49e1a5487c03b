package registry

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// TestOpenFile: a transcript file as a backend is one idle session named
// after the file and its kind; following it hands over the file's events
// at once, says they are all in, and waits; it can do nothing else.
func TestOpenFile(t *testing.T) {
	const path = "../claudecode/testdata/session.stream.jsonl"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := OpenFile(ctx, path, "", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := b.Capabilities(); c != (client.Capabilities{Recording: true}) {
		t.Errorf("capabilities %+v: a file can only be shown", c)
	}
	if b.Name() != "claude-code" || b.URL() != path {
		t.Errorf("name %q, url %q", b.Name(), b.URL())
	}
	ts, err := b.Sessions(ctx)
	if err != nil || len(ts) != 1 || ts[0].ID != "file:session.stream.jsonl" ||
		ts[0].Name != "session.stream.jsonl (claude-code)" || ts[0].Status != events.StatusIdle {
		t.Fatalf("sessions %+v %v", ts, err)
	}
	if s, err := b.Session(ctx, "file:sess"); err != nil || s.ID != ts[0].ID {
		t.Errorf("session by prefix: %+v %v", s, err)
	}
	if _, err := b.Session(ctx, "other"); !errors.Is(err, client.ErrNoTask) {
		t.Errorf("another session: %v, want ErrNoTask", err)
	}

	fctx, fcancel := context.WithCancel(ctx)
	var updates []client.Update
	done := make(chan error, 1)
	go func() {
		done <- b.Follow(fctx, ts[0].ID, func(u client.Update) {
			updates = append(updates, u)
			fcancel() // a file's follow then only waits
		})
	}()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow returned %v, want context.Canceled", err)
	}
	if len(updates) != 1 || !updates[0].Synced {
		t.Fatalf("updates %+v: want one, synced", updates)
	}
	tl := events.NewTimeline()
	for _, ev := range updates[0].Events {
		tl.Apply(ev)
	}
	var texts []string
	for _, it := range tl.Items() {
		texts = append(texts, it.Text)
	}
	if !strings.Contains(strings.Join(texts, "|"), "all 12 checkout tests pass") {
		t.Errorf("the file's conversation is missing: %q", texts)
	}
	if err := b.Follow(ctx, "other", func(client.Update) {}); !errors.Is(err, client.ErrNoTask) {
		t.Errorf("following another session: %v", err)
	}

	if _, err := b.Send(ctx, ts[0].ID, client.Message{Text: "hi"}); !errors.Is(err, client.ErrUnsupported) {
		t.Errorf("Send: %v", err)
	}
	if _, err := b.Cancel(ctx, ts[0].ID); !errors.Is(err, client.ErrUnsupported) {
		t.Errorf("Cancel: %v", err)
	}
	if _, err := b.Create(ctx, client.CreateRequest{Prompt: "hi"}); !errors.Is(err, client.ErrUnsupported) {
		t.Errorf("Create: %v", err)
	}
}

// TestOpenFileUnknown: a file of no known kind is a usage error, before
// any view opens.
func TestOpenFileUnknown(t *testing.T) {
	path := t.TempDir() + "/x.txt"
	if err := os.WriteFile(path, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := OpenFile(context.Background(), path, "", ingest.Options{})
	var ue *ingest.UsageError
	if !errors.As(err, &ue) {
		t.Fatalf("OpenFile: %v, want a usage error", err)
	}
}
