package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/events"
)

// followStub is a live backend whose session is generating: Follow hands
// out updates, says it did on reached, and waits for the end.
type followStub struct {
	stubBackend
	updates []client.Update
	once    sync.Once
	reached chan struct{}
}

func (f *followStub) Follow(ctx context.Context, _ string, on func(client.Update)) error {
	for _, u := range f.updates {
		on(u)
	}
	f.once.Do(func() { close(f.reached) })
	<-ctx.Done()
	return ctx.Err()
}

func newFollowStub(updates ...client.Update) *followStub {
	return &followStub{stubBackend: stubBackend{name: client.Suna, url: "http://suna.test/v1"}, updates: updates, reached: make(chan struct{})}
}

func (f *followStub) tweak(e *Env) {
	e.registry = func() *registry.Registry {
		return &registry.Registry{Systems: []registry.System{
			{Name: client.Maria},
			{Name: f.name, Probe: registry.ProbeOnly(func(context.Context, client.Config) error { return nil }),
				Open: func(client.Config) (client.Backend, error) { return f, nil }},
		}}
	}
}

// midRun is a session with a prompt, a reply so far, its run going on.
var midRun = client.Update{Synced: true, Events: []events.Event{
	{Kind: events.KindUserMessage, ID: "u1", Text: "Count the files."},
	{Kind: events.KindRunState, RunStatus: events.StatusGenerating},
	{Kind: events.KindAssistantMessage, ID: "a1", Text: "Counting so far: 3."},
}}

// interruptWhen runs perch and sends it Ctrl-C (an Interrupted cause)
// once ready is closed.
func interruptWhen(t *testing.T, ready <-chan struct{}, tweak func(*Env), args ...string) result {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		select {
		case <-ready:
			cancel(Interrupted{Signal: os.Interrupt})
		case <-time.After(60 * time.Second):
			cancel(nil)
		}
	}()
	return runEnv(ctx, t, tweak, "", args...)
}

// Ctrl-C during export --until-idle prints what was read, marked
// incomplete, says so on stderr and exits 130.
func TestExportInterrupted(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"jsonl", "md"} {
		f := newFollowStub(midRun)
		r := interruptWhen(t, f.reached, f.tweak, "export", "chat-bob", "--until-idle", "--format", format, "--url", f.url)
		if r.code != 130 {
			t.Fatalf("%s: exit %d, want 130\n%+v", format, r.code, r)
		}
		if !strings.Contains(r.stderr, "perch: interrupted") {
			t.Errorf("%s: stderr %q", format, r.stderr)
		}
		if !strings.Contains(r.stdout, "Counting so far: 3.") || !strings.Contains(r.stdout, "export was interrupted") {
			t.Errorf("%s: stdout\n%s", format, r.stdout)
		}
		if format == "jsonl" {
			// The notice is the last item; the state line ends every export.
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if n := len(lines); n < 2 || !strings.HasPrefix(lines[n-2], `{"type":"notice","level":"warning"`) || !strings.HasPrefix(lines[n-1], `{"type":"state"`) {
				t.Errorf("the export does not end with the notice and the state:\n%s", r.stdout)
			}
		}
	}
}

// Ctrl-C during tail and record exits 130 and says so.
func TestTailAndRecordInterrupted(t *testing.T) {
	t.Parallel()
	f := newFollowStub(midRun)
	r := interruptWhen(t, f.reached, f.tweak, "tail", "chat-bob", "--url", f.url)
	if r.code != 130 || r.stderr != "perch: interrupted\n" || !strings.Contains(r.stdout, "Counting so far") {
		t.Errorf("tail: %+v", r)
	}

	d, base := heldFake(t, "head")
	id := strings.TrimSpace(must(t, run(t, "", "new", "--url", base, "--cwd", t.TempDir(), "Run the slow benchmark please.")).stdout)
	waitRunningTool(t, base, id)
	defer d.ReleaseSlowTools()
	file := filepath.Join(t.TempDir(), "s.sse")
	written := make(chan struct{})
	go func() {
		for {
			if fi, err := os.Stat(file); err == nil && fi.Size() > 0 {
				close(written)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	r = interruptWhen(t, written, nil, "record", id, "-o", file, "--url", base)
	if r.code != 130 || !strings.Contains(r.stderr, "perch: recorded ") || !strings.HasSuffix(r.stderr, "perch: interrupted\n") {
		t.Errorf("record: %+v", r)
	}
}

// tail says when a run ends; with --until-idle it stops there.
func TestTailUntilIdle(t *testing.T) {
	t.Parallel()
	done := client.Update{Synced: true, Events: []events.Event{
		{Kind: events.KindAssistantMessage, ID: "a2", Text: "There are 4 files."},
		{Kind: events.KindRunState, RunStatus: events.StatusIdle},
	}}
	f := newFollowStub(midRun, done)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := runEnv(ctx, t, f.tweak, "", "tail", "chat-bob", "--until-idle", "--url", f.url)
	if r.code != 0 || ctx.Err() != nil {
		t.Fatalf("tail --until-idle did not end by itself: %+v", r)
	}
	if !strings.Contains(r.stdout, "There are 4 files.") || !strings.Contains(r.stdout, "── run ended (idle) ──") {
		t.Errorf("tail --until-idle:\n%s", r.stdout)
	}
}
