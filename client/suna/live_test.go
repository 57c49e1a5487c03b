package suna_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/client/suna"
	"github.com/perch-tui/perch/events"
	fake "github.com/perch-tui/perch/fakedaemon/suna"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

const secret = "jwt-secret-Zq81"

// fakeAPI is a fake Suna API on a loopback port that can be restarted on
// the same port.
type fakeAPI struct {
	t    testing.TB
	srv  *fake.Server
	addr string
	base string

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

func newFake(t testing.TB, opts fake.Options) *fakeAPI {
	t.Helper()
	if opts.Ping == 0 {
		opts.Ping = 50 * time.Millisecond
	}
	if opts.FrameDelay == 0 {
		opts.FrameDelay = time.Millisecond
	}
	f := &fakeAPI{t: t, srv: fake.New(opts)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	f.base = "http://" + f.addr + "/v1"
	f.serve(ln)
	t.Cleanup(func() {
		f.stop()
		f.srv.Close()
	})
	return f
}

func (f *fakeAPI) serve(ln net.Listener) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	f.mu.Lock()
	f.cancel, f.done = cancel, done
	f.mu.Unlock()
	go func() {
		defer close(done)
		_ = f.srv.Serve(ctx, ln)
	}()
}

func (f *fakeAPI) stop() {
	f.mu.Lock()
	cancel, done := f.cancel, f.done
	f.mu.Unlock()
	cancel()
	<-done
}

// restart stops serving (every connection dropped) and serves again on
// the same port; the server's state is kept.
func (f *fakeAPI) restart() {
	f.t.Helper()
	f.stop()
	var ln net.Listener
	var err error
	for i := 0; i < 100; i++ {
		if ln, err = net.Listen("tcp", f.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		f.t.Fatalf("listen again on %s: %v", f.addr, err)
	}
	f.serve(ln)
}

// httpClient is a client of its own, its idle connections closed at the
// end (goleak).
func httpClient(t testing.TB) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func open(t testing.TB, f *fakeAPI, token string) *suna.Live {
	t.Helper()
	l, err := suna.OpenTuned(client.Config{URL: f.base, Token: token, Client: httpClient(t)},
		100*time.Millisecond, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// watcher follows a session into a timeline, as the views do.
type watcher struct {
	mu      sync.Mutex
	tl      *events.Timeline
	synced  int
	resets  int
	states  []string
	updates int
	first   string // the export at the first Synced update
	err     error
	done    chan struct{}
	cancel  context.CancelFunc
}

func follow(t *testing.T, b client.Backend, id string) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{tl: events.NewTimeline(), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(w.done)
		err := b.Follow(ctx, id, func(u client.Update) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.updates++
			if u.Reset {
				w.resets++
				w.tl = events.NewTimeline()
			}
			for _, ev := range u.Events {
				w.tl.Apply(ev)
			}
			if u.State != nil {
				w.states = append(w.states, u.State.String())
			}
			if u.Synced {
				if w.synced == 0 {
					var b bytes.Buffer
					_ = transcript.WriteJSONL(&b, w.tl)
					w.first = b.String()
				}
				w.synced++
			}
		})
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
	}()
	t.Cleanup(w.stop)
	return w
}

func (w *watcher) stop() {
	w.cancel()
	<-w.done
}

// waitFor polls cond (under the watcher's lock) until it holds.
func (w *watcher) waitFor(t *testing.T, what string, cond func(w *watcher) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ok, err := w.check(cond)
		if ok {
			return
		}
		select {
		case <-w.done:
			t.Fatalf("waiting for %s: Follow returned %v", what, err)
		default:
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t.Fatalf("timed out waiting for %s; timeline:\n%s", what, exportOf(t, w.tl))
}

// check runs cond under the lock (released even if cond fails the test).
func (w *watcher) check(cond func(w *watcher) bool) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return cond(w), w.err
}

// last is the timeline's last item (an empty one when there is none).
func (w *watcher) last() *events.Item {
	its := w.tl.Items()
	if len(its) == 0 {
		return &events.Item{}
	}
	return its[len(its)-1]
}

func (w *watcher) export(t *testing.T) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return exportOf(t, w.tl)
}

func exportOf(t *testing.T, tl *events.Timeline) string {
	t.Helper()
	var b bytes.Buffer
	if err := transcript.WriteJSONL(&b, tl); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// idleAfterRuns: the run ended and the history was read again.
func idleAfterRuns(n int) func(w *watcher) bool {
	return func(w *watcher) bool {
		return w.resets >= n && w.tl.Status() == events.RunIdle
	}
}

// importHistory fetches the thread's history as a user would save it (the
// default newest-first order, optimized=false) and imports the file.
func importHistory(t *testing.T, f *fakeAPI, token, threadID string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", f.base+"/threads/"+threadID+"/messages?optimized=false", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("history: %d %v", resp.StatusCode, err)
	}
	path := filepath.Join(t.TempDir(), "history.json")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := registry.Run(context.Background(), path, "", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != "suna" {
		t.Fatalf("the history was detected as %q", res.Kind)
	}
	return exportOf(t, res.Timeline)
}

func checkLiveGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "live", name+".jsonl")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs:\n%s", path, diff(string(want), got))
	}
}

func startRun(t *testing.T, f *fakeAPI, threadID, prompt string) (string, string) {
	t.Helper()
	tid, rid, err := f.srv.Start(threadID, prompt)
	if err != nil {
		t.Fatal(err)
	}
	return tid, rid
}

func waitStatus(t *testing.T, f *fakeAPI, runID, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for f.srv.RunStatus(runID) != want {
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %q, want %q", runID, f.srv.RunStatus(runID), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// finalCheck: the live export equals its golden and the import of the
// thread's history.
func finalCheck(t *testing.T, f *fakeAPI, w *watcher, token, threadID, golden string) {
	t.Helper()
	got := w.export(t)
	checkLiveGolden(t, golden, got)
	if imp := importHistory(t, f, token, threadID); imp != got {
		t.Errorf("live export differs from the import of the history:\n%s", diff(imp, got))
	}
}

func TestLiveFinishedThread(t *testing.T) {
	t.Parallel()
	f := newFake(t, fake.Options{Token: secret})
	tid, rid := startRun(t, f, "", "What is in my workspace?")
	waitStatus(t, f, rid, "completed")
	l := open(t, f, secret)
	w := follow(t, l, tid)
	w.waitFor(t, "the history", func(w *watcher) bool { return w.synced >= 1 })
	w.mu.Lock()
	if w.resets != 0 || w.tl.Status() != events.RunIdle {
		t.Errorf("resets %d, status %v; want a first load and idle", w.resets, w.tl.Status())
	}
	w.mu.Unlock()
	finalCheck(t, f, w, secret, tid, "finished")
	if !strings.Contains(w.export(t), "café ☕ ready") {
		t.Error("the answer is missing")
	}
}

// midRun joins a held run mid-way, checks what the stream built, then
// lets it end and checks the final export. knobs change the fake.
func midRun(t *testing.T, opts fake.Options, during func(f *fakeAPI)) {
	opts.Hold = true
	f := newFake(t, opts)
	tid, rid := startRun(t, f, "", "What is in my workspace?")
	for f.srv.Frames(rid) < 10 {
		time.Sleep(time.Millisecond)
	}
	l := open(t, f, "")
	w := follow(t, l, tid)
	if during != nil {
		w.waitFor(t, "some of the stream", func(w *watcher) bool { return w.tl.Len() >= 2 })
		during(f)
	}
	// Held before its last frame: the whole answer and its stop reason.
	w.waitFor(t, "the answer streamed", func(w *watcher) bool {
		last := w.last()
		return last.Kind == events.ItemAssistant && strings.Contains(last.Text, "café ☕ ready.") && last.StopReason != ""
	})
	checkLiveGolden(t, "midrun_streamed", w.export(t))
	f.srv.Release()
	w.waitFor(t, "the run's end", idleAfterRuns(1))
	finalCheck(t, f, w, "", tid, "midrun")
	_ = rid
}

func TestLiveJoinedMidRun(t *testing.T) {
	t.Parallel()
	midRun(t, fake.Options{}, nil)
}

func TestLiveStreamCutEveryFewFrames(t *testing.T) {
	t.Parallel()
	midRun(t, fake.Options{DropEvery: 3}, nil)
}

func TestLiveServerRestartMidRun(t *testing.T) {
	t.Parallel()
	midRun(t, fake.Options{FrameDelay: 3 * time.Millisecond}, func(f *fakeAPI) { f.restart() })
}

// The stream never reports the end (a cached "running" status): the run's
// status endpoint is the judge.
func TestLiveCachedRunningStatus(t *testing.T) {
	t.Parallel()
	midRun(t, fake.Options{CachedRunning: true, DropEvery: 5}, nil)
}

func TestLiveTrimmedStream(t *testing.T) {
	t.Parallel()
	f := newFake(t, fake.Options{Hold: true, Trim: 8})
	tid, rid := startRun(t, f, "", "What is in my workspace?")
	for f.srv.Frames(rid) < 30 {
		time.Sleep(time.Millisecond)
	}
	w := follow(t, open(t, f, ""), tid)
	w.waitFor(t, "the answer streamed", func(w *watcher) bool {
		last := w.last()
		return last.Kind == events.ItemAssistant && strings.Contains(last.Text, "café ☕ ready.") && last.StopReason != ""
	})
	f.srv.Release()
	w.waitFor(t, "the run's end", idleAfterRuns(1))
	finalCheck(t, f, w, "", tid, "midrun") // the history fills what the trimmed stream lacked
}

func TestLiveStoppedRun(t *testing.T) {
	t.Parallel()
	f := newFake(t, fake.Options{Hold: true})
	tid, rid := startRun(t, f, "", "Tell me a long story, slow please")
	l := open(t, f, "")
	w := follow(t, l, tid)
	w.waitFor(t, "five steps", func(w *watcher) bool {
		return strings.Contains(w.last().Text, "Step 5 of the long answer.")
	})
	if _, err := l.Cancel(context.Background(), tid); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, rid, "stopped")
	// A stop writes nothing to the stream: the status endpoint says it.
	w.waitFor(t, "the run's end", idleAfterRuns(1))
	finalCheck(t, f, w, "", tid, "stopped")
	if _, err := l.Cancel(context.Background(), tid); err == nil {
		t.Error("a second cancel succeeded; want: nothing is running")
	}
}

func TestLiveFailedRun(t *testing.T) {
	t.Parallel()
	f := newFake(t, fake.Options{})
	tid, _ := startRun(t, f, "", "please fail now")
	w := follow(t, open(t, f, ""), tid)
	w.waitFor(t, "the run's end", idleAfterRuns(1))
	finalCheck(t, f, w, "", tid, "failed")
	if !strings.Contains(w.export(t), "rate limit exceeded") {
		t.Error("the error is missing")
	}
}

// A follow-up to an idle thread starts a run that the follower picks up;
// one to a running thread is ErrBusy (perch holds it).
func TestLiveSendStartsNextRun(t *testing.T) {
	t.Parallel()
	f := newFake(t, fake.Options{Hold: true, Token: secret})
	f.srv.Release() // the first run runs through
	tid, rid := startRun(t, f, "", "What is in my workspace?")
	waitStatus(t, f, rid, "completed")
	l := open(t, f, secret)
	w := follow(t, l, tid)
	w.waitFor(t, "the history", func(w *watcher) bool { return w.synced >= 1 })
	res, err := l.Send(context.Background(), tid, client.Message{Text: "And now fail please"})
	if err != nil || res.ID == "" || res.Queued {
		t.Fatalf("send: %+v, %v", res, err)
	}
	w.waitFor(t, "the follow-up run", idleAfterRuns(1))
	if n := f.srv.Requests("POST /agent/start"); n != 1 {
		t.Errorf("%d starts, want 1", n)
	}
	finalCheck(t, f, w, secret, tid, "followup")
	if !strings.Contains(w.export(t), "And now fail please") {
		t.Error("the follow-up is missing")
	}

	_, rid2 := startRun(t, f, tid, "slow again")
	waitStatus(t, f, rid2, "running")
	if _, err := l.Send(context.Background(), tid, client.Message{Text: "wait"}); !errors.Is(err, client.ErrBusy) {
		t.Errorf("send to a running thread: %v, want ErrBusy", err)
	}
}

func TestLiveSessionsAndCreate(t *testing.T) {
	t.Parallel()
	f := newFake(t, fake.Options{Hold: true})
	l := open(t, f, "")
	task, err := l.Create(context.Background(), client.CreateRequest{Prompt: "slow story"})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := l.Sessions(context.Background())
	if err != nil || len(ss) != 1 || ss[0].ID != task.ID || ss[0].Status != events.StatusGenerating || ss[0].Name != "slow story" {
		t.Fatalf("sessions: %+v, %v", ss, err)
	}
	got, err := l.Session(context.Background(), task.ID[:6])
	if err != nil || got.ID != task.ID {
		t.Fatalf("session by prefix: %+v, %v", got, err)
	}
	if _, err := l.Session(context.Background(), "nope"); err == nil {
		t.Error("an unknown thread was found")
	}
	caps := l.Capabilities()
	if !caps.Send || !caps.Cancel || caps.ServerQueue || caps.Cost {
		t.Errorf("capabilities %+v", caps)
	}
}

// 401 and 403 give one clear error that never shows the token.
func TestLiveAuthErrors(t *testing.T) {
	t.Parallel()
	f := newFake(t, fake.Options{Token: secret})
	tid, rid := startRun(t, f, "", "hello")
	waitStatus(t, f, rid, "completed")
	for _, tc := range []struct {
		token string
		code  string
		hint  string
	}{
		{"", "401", "--token"},
		{"wrong-" + secret, "403", "refused"},
	} {
		l := open(t, f, tc.token)
		_, err := l.Sessions(context.Background())
		check := func(what string, err error) {
			t.Helper()
			if err == nil {
				t.Fatalf("%s with token %q: no error", what, tc.token)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.code) || !strings.Contains(msg, tc.hint) || !strings.Contains(msg, f.base) {
				t.Errorf("%s: %q lacks %s, %q or the URL", what, msg, tc.code, tc.hint)
			}
			if strings.Contains(msg, secret) || strings.Count(msg, "\n") > 0 {
				t.Errorf("%s: %q shows the token or is not one line", what, msg)
			}
			if !errors.Is(err, suna.ErrAuth) {
				t.Errorf("%s: %v is not ErrAuth", what, err)
			}
		}
		check("sessions", err)
		w := follow(t, l, tid)
		<-w.done
		check("follow", w.err)
		for _, st := range w.states {
			if strings.Contains(st, secret) {
				t.Errorf("a state shows the token: %s", st)
			}
		}
		_, err = l.Send(context.Background(), tid, client.Message{Text: "x"})
		check("send", err)
	}
}

// The stream route refuses a wrong ?token= too; the error redacts it.
func TestLiveStreamAuthRedacted(t *testing.T) {
	t.Parallel()
	f := newFake(t, fake.Options{Token: secret, Hold: true})
	tid, _ := startRun(t, f, "", "hello")
	// A backend whose REST calls pass (a proxy adds the header) but whose
	// stream token is wrong.
	hc := httpClient(t)
	hc.Transport = rewriteAuth{hc.Transport, secret}
	l, err := suna.OpenTuned(client.Config{URL: f.base, Token: "wrong-" + secret, Client: hc}, 100*time.Millisecond, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	w := follow(t, l, tid)
	<-w.done
	if w.err == nil || !strings.Contains(w.err.Error(), "403") || strings.Contains(w.err.Error(), secret) ||
		!strings.Contains(w.err.Error(), "token=REDACTED") {
		t.Errorf("stream refusal: %v", w.err)
	}
	f.srv.Release()
}

// rewriteAuth puts the right token in the header of REST calls only.
type rewriteAuth struct {
	rt    http.RoundTripper
	token string
}

func (r rewriteAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.URL.Path, "/stream") {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+r.token)
	} else {
		req = req.Clone(req.Context())
		req.Header.Del("Authorization")
	}
	return r.rt.RoundTrip(req)
}

func TestProbe(t *testing.T) {
	t.Parallel()
	f := newFake(t, fake.Options{Token: secret})
	hc := httpClient(t)
	if err := suna.Probe(context.Background(), client.Config{URL: f.base, Token: secret, Client: hc}); err != nil {
		t.Errorf("probe of the fake: %v", err)
	}
	other := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"ok"}`)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go other.Serve(ln)
	defer other.Close()
	err = suna.Probe(context.Background(), client.Config{URL: "http://" + ln.Addr().String() + "/v1", Token: secret, Client: hc})
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("probe of another server: %v", err)
	}
}

func TestEventIDAndPing(t *testing.T) {
	for in, want := range map[string]string{
		`{"type": "ping"}`: "",
		`{"type": "assistant", "_event_id": "1740823200000-3"}`:     "1740823200000-3",
		`{"type":"x","_event_id":"17-0"}`:                           "17-0",
		`{"_event_id": "a-b"}`:                                      "",
		`{"content": "\"_event_id\": \"1-1\"", "_event_id": "2-2"}`: "2-2",
	} {
		if got := suna.EventID([]byte(in)); got != want {
			t.Errorf("EventID(%s) = %q, want %q", in, got, want)
		}
	}
	if !suna.IsPing([]byte(`{"type": "ping"}`)) || suna.IsPing([]byte(`{"type": "ping", "_event_id": "1-1"}`)) ||
		suna.IsPing([]byte(`not json ping`)) {
		t.Error("IsPing")
	}
}
