package pynchy_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/pynchy"
	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/events"
	fake "github.com/perch-tui/perch/fakedaemon/pynchy"
	"github.com/perch-tui/perch/internal/ingest"
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
	t    testing.TB
	srv  *fake.Server
	addr string
	url  string

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan error
}

func startFake(t testing.TB, opts fake.Options) *fakeServer {
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
	log     []string // queue, result and run-state events, in order: "queued", "unqueued", "result", "idle", "generating"
	states  []client.ConnState
	err     error
	done    chan struct{}
	cancel  context.CancelFunc
}

func follow(t *testing.T, b client.Backend, jid string) *follower {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &follower{tl: events.NewTimeline(), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(f.done)
		err := b.Follow(ctx, jid, func(u client.Update) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.updates++
			if u.Reset {
				f.resets++
				f.tl = events.NewTimeline()
			}
			for _, ev := range u.Events {
				f.tl.Apply(ev)
				switch ev.Kind {
				case events.KindMessageQueued:
					f.queued = append(f.queued, ev.Text)
					f.log = append(f.log, "queued")
				case events.KindMessageUnqueued:
					f.log = append(f.log, "unqueued")
				case events.KindRunState:
					f.log = append(f.log, ev.RunStatus)
				case events.KindPostToolCall:
					f.log = append(f.log, "result")
				}
			}
			if u.Synced {
				f.synced++
			}
			if u.State != nil {
				f.states = append(f.states, *u.State)
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

func (f *follower) get(fn func(*follower) bool) bool { return get(f, fn) }

// waitHistory waits for the chat's history to be delivered.
func (f *follower) waitHistory(t *testing.T) {
	t.Helper()
	eventually(t, "the history", func() bool { return f.get(func(f *follower) bool { return f.synced > 0 }) })
}

// waitStream waits for the stream to be followed: the history, then the
// reload on connect.
func (f *follower) waitStream(t *testing.T) {
	t.Helper()
	eventually(t, "the stream", func() bool { return f.get(func(f *follower) bool { return f.synced >= 2 }) })
}

// followFake starts a fake pynchy and follows its chat until the stream
// is followed.
func followFake(t *testing.T, opts fake.Options) (*fakeServer, client.Backend, *follower) {
	t.Helper()
	fs := startFake(t, opts)
	b := openBackend(t, fs.url)
	f := follow(t, b, chat)
	f.waitStream(t)
	return fs, b, f
}

func get[T any](f *follower, fn func(*follower) T) T {
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
	res, err := registry.Run(context.Background(), path, "pynchy", ingest.Options{})
	if err != nil {
		t.Fatalf("import the history: %v", err)
	}
	var b bytes.Buffer
	if err := transcript.WriteJSONL(&b, res.Timeline); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func openBackend(t *testing.T, url string) client.Backend {
	t.Helper()
	b, err := pynchy.Open(client.Config{URL: url})
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
	f.waitHistory(t)
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
	fs.srv.HoldAtRows(chat, 3)
	if err := fs.srv.Say(chat, "list the files"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the run's thinking", func() bool { return fs.srv.Held() && fs.srv.Rows(chat) >= 3 })
	f := follow(t, openBackend(t, fs.url), chat)
	f.waitHistory(t)
	// The history ends inside the run: perch shows it working (an export
	// that waits for the run must not stop here).
	if st := get(f, func(f *follower) events.RunStatus { return f.tl.Status() }); st != events.RunGenerating {
		t.Errorf("joined mid-run: status %v, want generating", st)
	}
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
	f.waitHistory(t)
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

// TestLiveCutStream: a stream cut every few frames gives the same
// transcript as an uncut one, with nothing repeated and nothing lost.
func TestLiveCutStream(t *testing.T) {
	noLeaks(t)
	for _, every := range []int{1, 3, 7} {
		t.Run(strconv.Itoa(every), func(t *testing.T) {
			fs := startFake(t, fake.Options{StepDelay: 5 * time.Millisecond, DropEvery: every})
			f := follow(t, openBackend(t, fs.url), chat)
			f.waitHistory(t)
			if err := fs.srv.Say(chat, "list the files"); err != nil {
				t.Fatal(err)
			}
			golden(t, "finished.jsonl", settled(t, fs, f, chat, 1))
			if r := get(f, func(f *follower) int { return f.resets }); r != 0 {
				t.Errorf("%d resets, want none: each reload should have filled the gap", r)
			}
		})
	}
}

// TestLiveRestart: the server goes away mid-run and comes back on the same
// port; the run went on meanwhile and its rows come from the history.
func TestLiveRestart(t *testing.T) {
	noLeaks(t)
	fs := startFake(t, fake.Options{StepDelay: 5 * time.Millisecond})
	f := follow(t, openBackend(t, fs.url), chat)
	f.waitHistory(t)
	if err := fs.srv.Say(chat, "list the files"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the run's thinking", func() bool { return fs.srv.Rows(chat) >= 3 })
	fs.restart(150 * time.Millisecond)
	golden(t, "finished.jsonl", settled(t, fs, f, chat, 1))
	if r := get(f, func(f *follower) int { return f.resets }); r != 0 {
		t.Errorf("%d resets, want none: the reload should have filled the gap", r)
	}
}

// TestLivePipedFollowUp: a follow-up sent while the agent works is queued
// until the agent's trace shows it read it, and is answered in the run.
func TestLivePipedFollowUp(t *testing.T) {
	noLeaks(t)
	fs, b, f := followFake(t, fake.Options{StepDelay: time.Millisecond})
	fs.srv.Hold()
	if err := fs.srv.Say(chat, "list the files"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the run to start", func() bool {
		return f.get(func(f *follower) bool { return f.tl.Status() == events.RunGenerating })
	})
	sendFollowUp(t, b, f)
	fs.srv.Release()
	got := settled(t, fs, f, chat, 2)
	golden(t, "piped.jsonl", got)
	checkAnswered(t, f, got)
}

const followUp = "also the tests, please"

// sendFollowUp sends followUp to the working agent of chat and waits for
// it to show queued.
func sendFollowUp(t *testing.T, b client.Backend, f *follower) {
	t.Helper()
	res, err := b.Send(context.Background(), chat, client.Message{Text: followUp})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Queued {
		t.Errorf("Send to a working agent: %+v, want Queued", res)
	}
	eventually(t, "the follow-up queued", func() bool {
		return f.get(func(f *follower) bool {
			q := f.tl.Queue()
			return len(q) == 1 && q[0].Text == followUp
		})
	})
}

// checkAnswered checks a run's export for followUp: no longer queued,
// shown once, and answered by the reply.
func checkAnswered(t *testing.T, f *follower, got []byte) {
	t.Helper()
	if q := f.get(func(f *follower) bool { return len(f.tl.Queue()) == 0 }); !q {
		t.Errorf("the follow-up is still queued after the run")
	}
	if n := strings.Count(string(got), `"text":"`+followUp+`"`); n != 1 {
		t.Errorf("the follow-up shows %d times, want once:\n%s", n, got)
	}
	if !strings.Contains(string(got), `You also said: \"`+followUp+`\"`) {
		t.Errorf("the reply does not answer the follow-up:\n%s", got)
	}
}

// TestLiveNaN: Python's bare NaN in a run's numbers does not break the
// transcript (unknown numbers are left out).
func TestLiveNaN(t *testing.T) {
	noLeaks(t)
	fs := startFake(t, fake.Options{StepDelay: time.Millisecond})
	f := follow(t, openBackend(t, fs.url), chat)
	f.waitHistory(t)
	if err := fs.srv.Say(chat, "nan numbers"); err != nil {
		t.Fatal(err)
	}
	golden(t, "nan.jsonl", settled(t, fs, f, chat, 1))
	if !bytes.Contains(historyJSON(t, fs.url, chat), []byte("NaN")) {
		t.Fatal("the fake wrote no NaN")
	}
}

// TestLiveSeveralChats: the global stream carries every chat; a followed
// chat shows its own only.
func TestLiveSeveralChats(t *testing.T) {
	noLeaks(t)
	fs := startFake(t, fake.Options{StepDelay: time.Millisecond, DropEvery: 5,
		Chats: []fake.Chat{{JID: "tg:1", Name: "One"}, {JID: "slack:C2", Name: "Two"}}})
	b := openBackend(t, fs.url)
	f1, f2 := follow(t, b, "tg:1"), follow(t, b, "slack:C2")
	for _, f := range []*follower{f1, f2} {
		f.waitHistory(t)
	}
	if err := fs.srv.Say("tg:1", "list the files"); err != nil {
		t.Fatal(err)
	}
	if err := fs.srv.Say("slack:C2", "this one will fail"); err != nil {
		t.Fatal(err)
	}
	got1 := settled(t, fs, f1, "tg:1", 1)
	got2 := settled(t, fs, f2, "slack:C2", 1)
	golden(t, "finished.jsonl", got1)
	golden(t, "failed.jsonl", got2)
	tasks, err := b.Sessions(context.Background())
	if err != nil || len(tasks) != 2 || tasks[0].ID != "tg:1" || tasks[1].Name != "Two" {
		t.Errorf("Sessions = %+v, %v", tasks, err)
	}
}

func TestLiveUnknownChat(t *testing.T) {
	noLeaks(t)
	fs := startFake(t, fake.Options{})
	b := openBackend(t, fs.url)
	err := b.Follow(context.Background(), "tg:nope", func(client.Update) { t.Error("an update for a chat that does not exist") })
	if err == nil || !strings.Contains(err.Error(), `no chat "tg:nope"`) || !strings.Contains(err.Error(), fs.url) || !strings.Contains(err.Error(), chat) {
		t.Errorf("Follow of an unknown chat: %v", err)
	}
	if _, err := b.Session(context.Background(), "tui"); err != nil {
		t.Errorf("a unique prefix: %v", err)
	}
	_, err = b.Send(context.Background(), "tg:nope", client.Message{Text: "hi"})
	if err == nil || client.ClassOf(err) != client.SendPermanent {
		t.Errorf("Send to an unknown chat: %v, want a permanent error", err)
	}
	if err == nil || !strings.Contains(err.Error(), `refused the message for chat "tg:nope"`) || !strings.Contains(err.Error(), fs.url+"/api/send") {
		t.Errorf("Send to an unknown chat: %v, want it to name the chat and the URL", err)
	}
	if err != nil && strings.Contains(err.Error(), "--url") {
		t.Errorf("Send to an unknown chat: %v blames the URL, but the server said what is wrong", err)
	}
}

func TestLiveNoCancelNoCreate(t *testing.T) {
	b := openBackend(t, "http://127.0.0.1:1")
	c := b.Capabilities()
	if c.Cancel || c.Create || !c.Send || !c.PipesFollowUps || !c.Cost || c.ServerQueue {
		t.Errorf("Capabilities = %+v", c)
	}
	if _, err := b.Cancel(context.Background(), chat); !errors.Is(err, client.ErrUnsupported) || !strings.Contains(err.Error(), "no cancel endpoint") {
		t.Errorf("Cancel: %v", err)
	}
	if _, err := b.Create(context.Background(), client.CreateRequest{}); !errors.Is(err, client.ErrUnsupported) {
		t.Errorf("Create: %v", err)
	}
	if b.Name() != client.Pynchy || b.URL() != "http://127.0.0.1:1" {
		t.Errorf("Name, URL = %q, %q", b.Name(), b.URL())
	}
}

func TestOpenBadURL(t *testing.T) {
	for _, u := range []string{"", "localhost:8484", "ftp://x", "http://"} {
		if _, err := pynchy.Open(client.Config{URL: u}); err == nil {
			t.Errorf("Open(%q): no error", u)
		}
	}
	_, err := pynchy.Open(client.Config{URL: "ftp://h/?token=secret"})
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("Open with a token in a bad URL: %v", err)
	}
}

func TestProbe(t *testing.T) {
	noLeaks(t)
	fs := startFake(t, fake.Options{})
	ctx := context.Background()
	if err := pynchy.Probe(ctx, client.Config{URL: fs.url}); err != nil {
		t.Errorf("Probe of the fake: %v", err)
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"status":"ok"}`)
			return
		}
		http.NotFound(w, r)
	}))
	defer other.Close()
	err := pynchy.Probe(ctx, client.Config{URL: other.URL, Token: "s3cret"})
	if err == nil || !strings.Contains(err.Error(), other.URL) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Probe of another server: %v", err)
	}
	if err := pynchy.Probe(ctx, client.Config{URL: "http://127.0.0.1:1"}); err == nil {
		t.Errorf("Probe of a closed port: no error")
	}
}

// TestLiveReloadOverlap: a message stored after the stream connected and
// before the history was reloaded is both in the reload and on the stream;
// it shows once.
func TestLiveReloadOverlap(t *testing.T) {
	noLeaks(t)
	srv := fake.New(fake.Options{StepDelay: time.Millisecond})
	t.Cleanup(func() { _ = srv.Close() })
	var mu sync.Mutex
	histories := 0
	inner := srv.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/messages" {
			mu.Lock()
			histories++
			n := histories
			mu.Unlock()
			if n == 2 { // the reload after the stream connected
				if err := srv.Say(chat, "list the files"); err != nil {
					t.Error(err)
				}
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	f := follow(t, openBackend(t, hs.URL), chat)
	eventually(t, "the run to end", func() bool { return srv.Sends(chat) == 1 && !srv.Active(chat) })
	want := importHistory(t, hs.URL, chat)
	eventually(t, "the live transcript to equal the import", func() bool { return bytes.Equal(f.export(t), want) })
	golden(t, "finished.jsonl", f.export(t))
	if r := get(f, func(f *follower) int { return f.resets }); r != 0 {
		t.Errorf("%d resets, want none", r)
	}
}

// TestWatchSessions: the chat list follows the agents' activity.
func TestWatchSessions(t *testing.T) {
	noLeaks(t)
	fs := startFake(t, fake.Options{StepDelay: 2 * time.Millisecond,
		Chats: []fake.Chat{{JID: "tg:1", Name: "One"}, {JID: "tg:2", Name: "Two"}}})
	b := openBackend(t, fs.url)
	w, ok := b.(client.SessionWatcher)
	if !ok {
		t.Fatal("the pynchy backend is not a SessionWatcher")
	}
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var seen []string // "jid status" each time a list came
	done := make(chan error, 1)
	go func() {
		done <- w.WatchSessions(ctx, func(ts []events.Task) {
			mu.Lock()
			defer mu.Unlock()
			for _, t := range ts {
				if t.ID == "tg:2" {
					seen = append(seen, t.Status)
				}
			}
		})
	}()
	has := func(s string) bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(seen, s)
	}
	eventually(t, "the first list", func() bool { return has(events.StatusIdle) })
	fs.srv.Hold()
	if err := fs.srv.Say("tg:2", "list the files"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "tg:2 generating", func() bool { return has(events.StatusGenerating) })
	mu.Lock()
	seen = nil
	mu.Unlock()
	fs.srv.Release()
	eventually(t, "tg:2 idle again", func() bool { return has(events.StatusIdle) })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("WatchSessions returned %v", err)
	}
}

// TestLiveCleared: after chat_cleared the history starts afresh, and so
// does the transcript.
func TestLiveCleared(t *testing.T) {
	noLeaks(t)
	fs, _, f := followFake(t, fake.Options{StepDelay: time.Millisecond})
	if err := fs.srv.Say(chat, "list the files"); err != nil {
		t.Fatal(err)
	}
	settled(t, fs, f, chat, 1)
	if err := fs.srv.Clear(chat); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reset", func() bool { return get(f, func(f *follower) int { return f.resets }) == 1 })
	if got, want := f.export(t), importHistory(t, fs.url, chat); !bytes.Equal(got, want) {
		t.Errorf("after the clear:\n%s\nwant:\n%s", got, want)
	}
	if err := fs.srv.Say(chat, "this one will fail"); err != nil {
		t.Fatal(err)
	}
	golden(t, "failed.jsonl", settled(t, fs, f, chat, 2))
}

// TestLiveFollowUpMidTool: a follow-up sent while the agent is inside a
// tool (after its tool_use, before its tool_result) shows queued until the
// agent's trace shows it read, the tool's result still attaches to its
// call, and the export equals the import of the chat's history.
func TestLiveFollowUpMidTool(t *testing.T) {
	noLeaks(t)
	fs, b, f := followFake(t, fake.Options{StepDelay: time.Millisecond})
	// Rows: You, system init, thinking, tool_use: the agent stops inside
	// its tool.
	fs.srv.HoldAtRows(chat, 4)
	if err := fs.srv.Say(chat, "list the files"); err != nil {
		t.Fatal(err)
	}
	toolRunning := func(f *follower) bool {
		for _, it := range f.tl.Items() {
			if it.Kind == events.ItemTool && it.Tool.Status == events.ToolRunning {
				return true
			}
		}
		return false
	}
	eventually(t, "the tool call", func() bool { return fs.srv.Held() && fs.srv.Rows(chat) == 4 && f.get(toolRunning) })
	sendFollowUp(t, b, f)
	if !f.get(toolRunning) {
		t.Errorf("the follow-up ended the tool call: it should still run")
	}
	fs.srv.Release()
	got := settled(t, fs, f, chat, 2)
	golden(t, "midtool.jsonl", got)
	get(f, func(f *follower) bool {
		// Unqueued by the agent's user_input trace, which the fake sends
		// before the tool's result: not by the run's end.
		if i := slices.Index(f.log, "unqueued"); i < 0 || !slices.Contains(f.log[i:], "result") {
			t.Errorf("events %q: want the follow-up unqueued when the agent read it, before the tool's result", f.log)
		}
		if !slices.Equal(f.queued, []string{followUp}) {
			t.Errorf("queued %q, want the follow-up once", f.queued)
		}
		var tools []*events.Item
		for _, it := range f.tl.Items() {
			if it.Kind == events.ItemTool {
				tools = append(tools, it)
			}
		}
		if len(tools) != 1 || tools[0].Tool.Result == nil || tools[0].Tool.Result.Text != "README.md\nmain.go\n" ||
			tools[0].Tool.Status != events.ToolOK {
			t.Errorf("want one tool item with its result, got %d: %+v", len(tools), tools)
		}
		if f.resets != 0 {
			t.Errorf("%d resets, want none", f.resets)
		}
		return true
	})
	checkAnswered(t, f, got)
}
