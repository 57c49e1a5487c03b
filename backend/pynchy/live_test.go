package pynchy_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/backend/pynchy"
	"github.com/perch-tui/perch/events"
	fake "github.com/perch-tui/perch/fakedaemon/pynchy"
	"github.com/perch-tui/perch/importer"
	"github.com/perch-tui/perch/ingest"
	"github.com/perch-tui/perch/transcript"
)

// noLeaks checks for goroutines left behind once every cleanup (the fake
// server's last) has run.
func noLeaks(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

// waitFor is generous: a loaded two-core -race run is slow.
const waitFor = 60 * time.Second

// fakeServer is a fake pynchy on a loopback port that can be restarted on
// the same port.
type fakeServer struct {
	t    *testing.T
	srv  *fake.Server
	addr string
	url  string

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan error
}

func startFake(t *testing.T, opts fake.Options) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{t: t, srv: fake.New(opts), addr: ln.Addr().String()}
	f.url = "http://" + f.addr
	f.serve(ln)
	t.Cleanup(func() {
		f.stop()
		_ = f.srv.Close()
	})
	return f
}

func (f *fakeServer) serve(ln net.Listener) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ctx, ln) }()
	f.mu.Lock()
	f.cancel, f.done = cancel, done
	f.mu.Unlock()
}

func (f *fakeServer) stop() {
	f.mu.Lock()
	cancel, done := f.cancel, f.done
	f.cancel, f.done = nil, nil
	f.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// restart stops the server (every connection drops at once) and serves
// again on the same port, its state kept.
func (f *fakeServer) restart(down time.Duration) {
	f.t.Helper()
	f.stop()
	time.Sleep(down) // the outage itself, not an assertion
	deadline := time.Now().Add(waitFor)
	for {
		ln, err := net.Listen("tcp", f.addr)
		if err == nil {
			f.serve(ln)
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("listen again on %s: %v", f.addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// eventually polls cond until it holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// follower collects what Follow delivers into a timeline, as a view does.
type follower struct {
	mu      sync.Mutex
	tl      *events.Timeline
	resets  int
	synced  int
	updates int
	queued  []string // texts seen in the queue, in order
	err     error
	done    chan struct{}
	cancel  context.CancelFunc
}

func follow(t *testing.T, b backend.Backend, jid string) *follower {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &follower{tl: events.NewTimeline(), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(f.done)
		err := b.Follow(ctx, jid, func(u backend.Update) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.updates++
			if u.Reset {
				f.resets++
				f.tl = events.NewTimeline()
			}
			for _, ev := range u.Events {
				f.tl.Apply(ev)
				if ev.Kind == events.KindMessageQueued {
					f.queued = append(f.queued, ev.Text)
				}
			}
			if u.Synced {
				f.synced++
			}
		})
		f.mu.Lock()
		f.err = err
		f.mu.Unlock()
	}()
	t.Cleanup(f.stop)
	return f
}

func (f *follower) stop() {
	f.cancel()
	<-f.done
}

func (f *follower) export(t *testing.T) []byte {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var b bytes.Buffer
	if err := transcript.WriteJSONL(&b, f.tl); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func (f *follower) get(fn func(*follower) bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fn(f)
}

// historyJSON is the chat's history as `curl /api/messages` saves it.
func historyJSON(t *testing.T, base, jid string) []byte {
	t.Helper()
	resp, err := http.Get(base + "/api/messages?limit=1000000&jid=" + jid)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// importHistory is `perch import --format jsonl` of the chat's history.
func importHistory(t *testing.T, base, jid string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.json")
	if err := os.WriteFile(path, historyJSON(t, base, jid), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := importer.Run(context.Background(), path, "pynchy", ingest.Options{})
	if err != nil {
		t.Fatalf("import the history: %v", err)
	}
	var b bytes.Buffer
	if err := transcript.WriteJSONL(&b, res.Timeline); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func openBackend(t *testing.T, url string) backend.Backend {
	t.Helper()
	b, err := pynchy.Open(backend.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// settled waits until the server's chat is idle with n messages sent and
// the follower's transcript equals the import of the chat's history; it
// returns that transcript.
func settled(t *testing.T, fs *fakeServer, f *follower, jid string, sends int) []byte {
	t.Helper()
	eventually(t, "the run to end", func() bool { return fs.srv.Sends(jid) == sends && !fs.srv.Active(jid) })
	want := importHistory(t, fs.url, jid)
	var got []byte
	deadline := time.Now().Add(waitFor)
	for {
		got = f.export(t)
		if bytes.Equal(got, want) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the live transcript never equalled the import of the history:\nlive:\n%s\nimport:\n%s", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "live", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden (go test -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden:\n%s\nwant:\n%s", name, got, want)
	}
}

const chat = "tui:main"

func TestLiveFinishedChat(t *testing.T) {
	noLeaks(t)
	fs := startFake(t, fake.Options{StepDelay: -1})
	if err := fs.srv.Say(chat, "list the files"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the run to end", func() bool { return !fs.srv.Active(chat) })
	f := follow(t, openBackend(t, fs.url), chat)
	eventually(t, "the history", func() bool { return f.get(func(f *follower) bool { return f.synced > 0 }) })
	got := settled(t, fs, f, chat, 1)
	golden(t, "finished.jsonl", got)
	f.stop()
	fs.stop()
	_ = fs.srv.Close()
	if f.resets != 0 {
		t.Errorf("%d resets, want none", f.resets)
	}
	if !errors.Is(f.err, context.Canceled) {
		t.Errorf("Follow returned %v, want context.Canceled", f.err)
	}
}

func TestLiveJoinedMidRun(t *testing.T) {
	noLeaks(t)
	fs := startFake(t, fake.Options{StepDelay: time.Millisecond})
	fs.srv.Hold()
	if err := fs.srv.Say(chat, "list the files"); err != nil {
		t.Fatal(err)
	}
	fs.srv.Release()
	eventually(t, "the run's thinking", func() bool { return fs.srv.Rows(chat) >= 3 })
	fs.srv.Hold()
	f := follow(t, openBackend(t, fs.url), chat)
	eventually(t, "the history", func() bool { return f.get(func(f *follower) bool { return f.synced > 0 }) })
	fs.srv.Release()
	got := settled(t, fs, f, chat, 1)
	golden(t, "midrun.jsonl", got)
	if f.get(func(f *follower) bool { return f.resets != 0 }) {
		t.Errorf("resets, want none")
	}
}

func TestLiveFailedRun(t *testing.T) {
	noLeaks(t)
	fs := startFake(t, fake.Options{StepDelay: time.Millisecond})
	f := follow(t, openBackend(t, fs.url), chat)
	eventually(t, "the history", func() bool { return f.get(func(f *follower) bool { return f.synced > 0 }) })
	if err := fs.srv.Say(chat, "this one will fail"); err != nil {
		t.Fatal(err)
	}
	got := settled(t, fs, f, chat, 1)
	golden(t, "failed.jsonl", got)
	if !strings.Contains(string(got), "Agent error occurred") {
		t.Errorf("no error notice in:\n%s", got)
	}
	if f.get(func(f *follower) bool { return f.resets != 0 }) {
		t.Errorf("resets, want none")
	}
}
