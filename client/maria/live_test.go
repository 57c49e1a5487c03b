package maria

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/internal/testpar"
	"github.com/perch-tui/perch/internal/testproxy"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/transcript"
)

// Most Follow tests wait out quiet windows: run eight at once.
func TestMain(m *testing.M) {
	testpar.Raise(8)
	goleak.VerifyTestMain(m)
}

// fake starts the maria fake daemon on loopback.
func fake(t *testing.T, speed float64) (*fakedaemon.Daemon, string) {
	t.Helper()
	d := fakedaemon.New(fakedaemon.Options{Speed: speed, Seed: 7})
	srv, err := d.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return d, srv.URL
}

func open(t *testing.T, base string) *Backend {
	t.Helper()
	b, err := OpenWith(client.Config{URL: base})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// followed is what one Follow delivered.
type followed struct {
	tl       *events.Timeline
	synced   int
	reconn   int // reconnecting states
	updates  int
	goodLast bool // every update was delivered before Follow returned
}

// follow runs Follow until stop says so (checked after each update) or
// the deadline, and returns what it saw.
func follow(t *testing.T, b *Backend, id string, stop func(u client.Update, f *followed) bool) *followed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := &followed{tl: events.NewTimeline()}
	done := false
	err := b.Follow(ctx, id, func(u client.Update) {
		if done {
			t.Error("an update after Follow was asked to stop")
		}
		f.updates++
		if u.Reset {
			f.tl = events.NewTimeline()
		}
		for _, ev := range u.Events {
			f.tl.Apply(ev)
		}
		if u.Synced {
			f.synced++
		}
		if u.State != nil && u.State.Phase == sse.PhaseReconnecting {
			f.reconn++
		}
		if stop(u, f) {
			done = true
			cancel()
		}
	})
	if !done {
		t.Fatalf("Follow ended before the condition: %v", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow returned %v, want context.Canceled", err)
	}
	return f
}

func untilSynced(u client.Update, _ *followed) bool { return u.Synced }

func jsonl(t *testing.T, tl *events.Timeline) string {
	t.Helper()
	var b bytes.Buffer
	if err := transcript.WriteJSONL(&b, tl); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// loadRecording serves a recorded stream as a task of the fake daemon.
func loadRecording(t *testing.T, d *fakedaemon.Daemon, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id, err := d.LoadRecording(f, filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

var corpus = "testdata/streams/"

// TestFollowRecordedStreams: for every recorded stream of the corpus (three
// dialects), served live by the fake daemon, Follow delivers the timeline
// the recorded stream decodes to today — the transcript goldens — and says
// Synced once.
func TestFollowRecordedStreams(t *testing.T) {
	files, _ := filepath.Glob(corpus + "*.sse")
	if len(files) < 15 {
		t.Fatalf("corpus has %d files, want >= 15", len(files))
	}
	d, base := fake(t, 1000)
	b := open(t, base)
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".sse")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			id := loadRecording(t, d, path)
			f := follow(t, b, id, untilSynced)
			want, err := os.ReadFile(filepath.Join("../../transcript/testdata", name+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if got := jsonl(t, f.tl); got != string(want) {
				t.Fatalf("Follow's timeline differs from the golden:\n%s\nwant\n%s", got, want)
			}
			if f.synced != 1 {
				t.Fatalf("synced %d times", f.synced)
			}
		})
	}
}

// TestFollowReconnectNoDuplicates: a stream cut mid-event every few events
// gives, through the reconnects, exactly the golden timeline: nothing
// doubled, nothing lost.
func TestFollowReconnectNoDuplicates(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"stream_b.head", "stream_a.docs", "stream_c.legacy"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d, base := fake(t, 1000)
			id := loadRecording(t, d, corpus+name+".sse")
			// Let the recording reach the daemon's log entirely first.
			follow(t, open(t, base), id, untilSynced)
			proxy := testproxy.Cut(t, base, 4, nil)
			f := follow(t, open(t, proxy.URL+"/v1"), id, untilSynced)
			if f.reconn < 2 {
				t.Fatalf("only %d reconnects: the test proves nothing", f.reconn)
			}
			want, _ := os.ReadFile(filepath.Join("../../transcript/testdata", name+".jsonl"))
			if got := jsonl(t, f.tl); got != string(want) {
				t.Fatalf("after %d reconnects the timeline differs:\n%s\nwant\n%s", f.reconn, got, want)
			}
		})
	}
}

// TestFollowLiveRun: a run followed from its start, on the fake's scripted
// agent: the live updates end in the same timeline as a later replay, and
// Synced comes while the run may still go on.
func TestFollowLiveRun(t *testing.T) {
	t.Parallel()
	d, base := fake(t, 20)
	b := open(t, base)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	task, err := b.Create(ctx, client.CreateRequest{Cwd: t.TempDir(), Prompt: "What does this project do? Look at the README."})
	if err != nil {
		t.Fatal(err)
	}
	live := follow(t, b, task.ID, func(u client.Update, f *followed) bool {
		return f.synced > 0 && f.tl.Status() == events.RunIdle && f.tl.Len() > 2
	})
	replayed := follow(t, b, task.ID, untilSynced)
	if a, b := jsonl(t, live.tl), jsonl(t, replayed.tl); a != b {
		t.Fatalf("live timeline differs from its replay:\n%s\nvs\n%s", a, b)
	}
	if got := d.Received(task.ID); len(got) != 1 {
		t.Fatalf("daemon received %q", got)
	}
}

// TestFollowServerClosesAfterReplay: behind a server that closes the
// stream after each replay, Synced comes from the clean close that follows
// a replay with nothing new (the quiet window never passes while
// connected), and the replays double nothing.
func TestFollowServerClosesAfterReplay(t *testing.T) {
	t.Parallel()
	log, err := os.ReadFile(corpus + "stream_a.head.sse")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/task/t1/events" {
			http.NotFound(w, r)
			return
		}
		conns.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(log)
	}))
	defer srv.Close()
	f := follow(t, open(t, srv.URL+"/v1"), "t1", untilSynced)
	if n := conns.Load(); n < 2 {
		t.Fatalf("synced after %d connection(s)", n)
	}
	want, _ := os.ReadFile("../../transcript/testdata/stream_a.head.jsonl")
	if got := jsonl(t, f.tl); got != string(want) {
		t.Fatalf("timeline differs:\n%s\nwant\n%s", got, want)
	}
}

// TestFollowWaitsOutASlowEvent: an event that takes longer than the quiet
// window to arrive does not end the replay early.
func TestFollowWaitsOutASlowEvent(t *testing.T) {
	t.Parallel()
	srv := pausedInsideAnEvent(t, 1500*time.Millisecond, func() {})
	b := open(t, srv.URL+"/v1")
	b.ReplayEnd = func(context.Context, *Client, string) ReplayEnd { return NewQuietEnd(300 * time.Millisecond) }
	f := follow(t, b, "t1", untilSynced)
	want, _ := os.ReadFile("../../transcript/testdata/stream_c.head.jsonl")
	if got := jsonl(t, f.tl); got != string(want) {
		t.Fatalf("synced before the slow event was in:\n%s\nwant\n%s", got, want)
	}
}

// pausedInsideAnEvent serves the stream_c recording, pausing for pause
// inside one of its events; beforeRest runs just before the rest is
// written. The server stays open until the client goes.
func pausedInsideAnEvent(t *testing.T, pause time.Duration, beforeRest func()) *httptest.Server {
	t.Helper()
	log, err := os.ReadFile(corpus + "stream_c.head.sse")
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.Index(log, []byte("PostToolCall")) // inside an event
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write(log[:cut])
		w.(http.Flusher).Flush()
		select {
		case <-time.After(pause):
		case <-r.Context().Done():
			return
		}
		beforeRest()
		w.Write(log[cut:])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestFollowUnknownTask: a 404 ends Follow with the daemon's error, after
// a Failed state.
func TestFollowUnknownTask(t *testing.T) {
	_, base := fake(t, 20)
	var failed bool
	err := open(t, base).Follow(context.Background(), "00000000-0000-4000-8000-000000000000", func(u client.Update) {
		if u.State != nil && u.State.Phase == sse.PhaseFailed {
			failed = true
		}
	})
	if err == nil || !strings.Contains(err.Error(), "404") || !failed {
		t.Fatalf("err %v, failed state %v", err, failed)
	}
}

// TestQuietEnd: the default rule, step by step.
func TestQuietEnd(t *testing.T) {
	news := []events.Event{{Kind: events.KindUserMessage, ID: "u1"}}
	snap := []events.Event{{Kind: events.KindQueueSnapshot}}
	type step struct {
		do   string // connect, news, snap, clean, broken
		want bool   // Closed's answer
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"clean close after a replay with nothing new", []step{{"connect", false}, {"news", false}, {"clean", false}, {"connect", false}, {"clean", true}}},
		{"a snapshot is no news", []step{{"connect", false}, {"news", false}, {"clean", false}, {"connect", false}, {"snap", false}, {"clean", true}}},
		{"an empty log proves nothing by closes", []step{{"connect", false}, {"clean", false}, {"connect", false}, {"clean", false}, {"connect", false}, {"clean", false}}},
		{"news on the second connection", []step{{"connect", false}, {"news", false}, {"clean", false}, {"connect", false}, {"news", false}, {"clean", false}}},
		{"a broken connection in between", []step{{"connect", false}, {"news", false}, {"clean", false}, {"broken", false}, {"connect", false}, {"clean", false}}},
		{"a failed attempt is not a replay", []step{{"connect", false}, {"news", false}, {"clean", false}, {"clean", false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := NewQuietEnd(0)
			if w, strict := q.Quiet(); w != Settle || strict {
				t.Fatalf("quiet %v %v", w, strict)
			}
			for i, s := range tc.steps {
				got := false
				switch s.do {
				case "connect":
					q.Connected()
				case "news":
					q.Decoded(events.KindUserMessage, news)
				case "snap":
					q.Decoded(events.KindQueueSnapshot, snap)
				case "clean":
					got = q.Closed(true)
				case "broken":
					got = q.Closed(false)
				}
				if got != s.want {
					t.Fatalf("step %d (%s): Closed %v, want %v", i, s.do, got, s.want)
				}
			}
		})
	}
}

// imitation serves what other systems answer at the routes maria's probe
// asks.
func imitation(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestProbe: the real fake answers as maria; Suna-like, pynchy-like and
// other servers do not, and say why without the token.
func TestProbe(t *testing.T) {
	_, base := fake(t, 20)
	const token = "sekrit-token-123"
	suna := imitation(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") == "" {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"detail":"Authentication required"}`)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"detail":"Not Found"}`)
	})
	pynchy := imitation(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			io.WriteString(w, `{"status":"ok"}`)
		case "/api/events":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"type\": \"agent_activity\", \"chat_jid\": \"c1\", \"active\": true}\n\n")
		default:
			http.NotFound(w, r)
		}
	})
	unnamed := imitation(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"tasks\":[]}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	jsonTasks := imitation(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"tasks":[]}`)
	})
	notAList := imitation(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: daemon.tasks.synchronized\ndata: {\"threads\":[]}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Probe(ctx, client.Config{URL: base, Token: token}); err != nil {
		t.Fatalf("the fake daemon does not answer as maria: %v", err)
	}
	for name, u := range map[string]string{
		"suna": suna + "/v1", "suna old base": suna + "/api", "pynchy": pynchy, "pynchy with /v1": pynchy + "/v1",
		"an unnamed event": unnamed + "/v1", "a JSON task list": jsonTasks + "/v1", "the name without a list": notAList + "/v1",
		"nothing listening": down,
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			err := Probe(ctx, client.Config{URL: u, Token: token})
			if err == nil {
				t.Fatal("answers as maria")
			}
			if strings.Contains(err.Error(), token) {
				t.Fatalf("the token is in the error: %v", err)
			}
			host := strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://")
			host = strings.SplitN(host, "/", 2)[0]
			if !strings.Contains(err.Error(), host) {
				t.Fatalf("the error does not name the URL: %v", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("the probe took %v", d)
			}
		})
	}
}

// TestTokenAndCalls: the token goes as a bearer token on calls and
// streams; Sessions, Session (prefix), Send, Cancel and Create reach the
// fake daemon.
func TestTokenAndCalls(t *testing.T) {
	t.Parallel()
	d, base := fake(t, 2)
	var mu sync.Mutex
	auth := map[string]bool{}
	proxy := testproxy.Forward(t, base, func(r *http.Request) {
		mu.Lock()
		auth[r.Header.Get("Authorization")] = true
		mu.Unlock()
	})
	b, err := OpenWith(client.Config{URL: proxy.URL + "/v1", Token: "tok-42"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Name() != client.Maria || b.URL() != proxy.URL+"/v1" {
		t.Fatalf("name %q url %q", b.Name(), b.URL())
	}
	if c := b.Capabilities(); !c.Create || !c.Send || !c.Cancel || !c.ServerQueue || c.PipesFollowUps {
		t.Fatalf("capabilities %+v", c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	task, err := b.Create(ctx, client.CreateRequest{Cwd: t.TempDir(), Name: "slow", Prompt: "Run the slow benchmark please."})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := b.Sessions(ctx)
	if err != nil || len(ss) != 1 || ss[0].ID != task.ID {
		t.Fatalf("sessions %+v %v", ss, err)
	}
	s, err := b.Session(ctx, task.ID[:6])
	if err != nil || s.ID != task.ID || s.Name != "slow" {
		t.Fatalf("session %+v %v", s, err)
	}
	// Wait for the slow tool, then a follow-up is queued by the daemon.
	follow(t, b, task.ID, func(u client.Update, f *followed) bool {
		for _, it := range f.tl.Items() {
			if it.Kind == events.ItemTool && it.Tool.Status == events.ToolRunning {
				return true
			}
		}
		return false
	})
	res, err := b.Send(ctx, task.ID, client.Message{Text: "and then a joke"})
	if err != nil || !res.Queued || res.ID == "" {
		t.Fatalf("send %+v %v", res, err)
	}
	pending, err := b.Cancel(ctx, task.ID)
	if err != nil || len(pending) != 1 || pending[0].Text != "and then a joke" {
		t.Fatalf("cancel %+v %v", pending, err)
	}
	if _, err := b.Cancel(ctx, task.ID); !errors.Is(err, client.ErrNotRunning) {
		t.Fatalf("cancel when idle: %v", err)
	}
	if got := d.Received(task.ID); len(got) != 2 {
		t.Fatalf("daemon received %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) != 1 || !auth["Bearer tok-42"] {
		t.Fatalf("Authorization headers seen: %v", auth)
	}
}

// TestWatchSessions: the daemon stream's snapshot and changes keep the
// list whole: a task created while watching appears first, and its status
// follows its run (generating, then idle).
func TestWatchSessions(t *testing.T) {
	d, base := fake(t, 20)
	first, err := d.CreateTask(fakedaemon.CreateRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b := open(t, base)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	var calls int
	var last []events.Task
	sawGenerating := false
	err = b.WatchSessions(ctx, func(ts []events.Task) {
		calls++
		last = ts
		if calls == 1 {
			if len(ts) != 1 || ts[0].ID != first {
				t.Errorf("first list %+v", ts)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := b.Create(ctx, client.CreateRequest{Cwd: t.TempDir(), Prompt: "Say hello"}); err != nil && ctx.Err() == nil {
					t.Error(err)
				}
			}()
			return
		}
		if len(ts) == 2 && ts[0].ID != first {
			switch ts[0].Status {
			case events.StatusGenerating:
				sawGenerating = true
			case events.StatusIdle:
				if sawGenerating {
					cancel()
				}
			}
		}
	})
	if !errors.Is(err, context.Canceled) || ctx.Err() != context.Canceled {
		t.Fatalf("watch ended with %v after %d calls; last %+v", err, calls, last)
	}
	if len(last) != 2 || last[0].ID == first || last[1].ID != first {
		t.Fatalf("last list %+v", last)
	}
}

// TestOpenErrors: a URL maria cannot use is refused with the URL named.
func TestOpenErrors(t *testing.T) {
	for _, u := range []string{"", "localhost:8090", "http://localhost:8090", "ftp://x/v1"} {
		if _, err := Open(client.Config{URL: u}); err == nil {
			t.Errorf("%q accepted", u)
		} else if u != "" && !strings.Contains(err.Error(), strings.TrimPrefix(u, "ftp://")) {
			t.Errorf("%q: %v", u, err)
		}
	}
	b, err := Open(client.Config{URL: "http://localhost:8090/v1/"})
	if err != nil || b.URL() != "http://localhost:8090/v1" {
		t.Fatalf("%v %v", b, err)
	}
}

// wakingEnd is a rule that learns in the background that the replay can
// end sooner (as one that fetched the task's status would).
type wakingEnd struct {
	*QuietEnd
	wake  chan struct{}
	short atomic.Bool
}

func (w *wakingEnd) Wake() <-chan struct{} { return w.wake }
func (w *wakingEnd) Quiet() (time.Duration, bool) {
	if w.short.Load() {
		return 50 * time.Millisecond, false
	}
	return time.Hour, false
}

// TestFollowReplayEndWakes: a replaceable rule decides the window; a wake
// makes Follow ask it again, so new evidence ends the replay at once.
func TestFollowReplayEndWakes(t *testing.T) {
	t.Parallel()
	d, base := fake(t, 1000)
	id := loadRecording(t, d, corpus+"stream_a.head.sse")
	b := open(t, base)
	var made atomic.Int32
	b.ReplayEnd = func(ctx context.Context, cl *Client, sessionID string) ReplayEnd {
		made.Add(1)
		if cl != b.Client() || sessionID != id {
			t.Errorf("rule made for %v %q", cl, sessionID)
		}
		w := &wakingEnd{QuietEnd: NewQuietEnd(0), wake: make(chan struct{}, 1)}
		go func() {
			select {
			case <-time.After(300 * time.Millisecond):
				w.short.Store(true)
				w.wake <- struct{}{}
			case <-ctx.Done():
			}
		}()
		return w
	}
	start := time.Now()
	f := follow(t, b, id, untilSynced)
	if d := time.Since(start); d > 20*time.Second || made.Load() != 1 {
		t.Fatalf("synced after %v, %d rules", d, made.Load())
	}
	want, _ := os.ReadFile("../../transcript/testdata/stream_a.head.jsonl")
	if got := jsonl(t, f.tl); got != string(want) {
		t.Fatalf("timeline differs:\n%s", got)
	}
}

// TestEvidenceEnd: the default rule, step by step: the short, strict
// window only while the daemon says idle or stopped, the connection's last
// frame ends a run and the delivered run is over.
func TestEvidenceEnd(t *testing.T) {
	ev := func(k events.Kind) []events.Event { return []events.Event{{Kind: k, ID: "x"}} }
	long := func(e *EvidenceEnd) bool { w, s := e.Quiet(); return w == Settle && !s }
	quick := func(e *EvidenceEnd) bool { w, s := e.Quiet(); return w == SettleQuick && s }
	for _, tc := range []struct {
		name string
		do   func(e *EvidenceEnd)
		want func(*EvidenceEnd) bool
	}{
		{"nothing known", func(e *EvidenceEnd) {}, long},
		{"idle, the run's end last", func(e *EvidenceEnd) {
			e.Status(events.StatusIdle)
			e.Decoded(events.KindPreConversation, ev(events.KindPreConversation))
			e.Decoded(events.KindPostConversation, ev(events.KindPostConversation))
		}, quick},
		{"stopped, a failed run last", func(e *EvidenceEnd) {
			e.Status(events.StatusStopped)
			e.Decoded(events.KindFailed, ev(events.KindFailed))
		}, quick},
		{"the status unknown", func(e *EvidenceEnd) {
			e.Decoded(events.KindPostConversation, ev(events.KindPostConversation))
		}, long},
		{"generating", func(e *EvidenceEnd) {
			e.Status(events.StatusGenerating)
			e.Decoded(events.KindPostConversation, ev(events.KindPostConversation))
		}, long},
		{"the status could not be asked again", func(e *EvidenceEnd) {
			e.Status(events.StatusIdle)
			e.Decoded(events.KindPostConversation, ev(events.KindPostConversation))
			e.Status("")
		}, long},
		{"a frame after the run's end", func(e *EvidenceEnd) {
			e.Status(events.StatusIdle)
			e.Decoded(events.KindPostConversation, ev(events.KindPostConversation))
			e.Decoded(events.KindQueueSnapshot, ev(events.KindQueueSnapshot))
		}, long},
		{"an old run's end replayed after a delivered run start", func(e *EvidenceEnd) {
			e.Status(events.StatusIdle)
			e.Decoded(events.KindPostConversation, ev(events.KindPostConversation))
			e.Decoded(events.KindPreConversation, ev(events.KindPreConversation))
			e.Connected()
			e.Decoded(events.KindPostConversation, nil) // the replay: dropped
		}, long},
		{"a new connection", func(e *EvidenceEnd) {
			e.Status(events.StatusIdle)
			e.Decoded(events.KindPostConversation, ev(events.KindPostConversation))
			e.Connected()
		}, long},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEvidenceEnd(context.Background(), nil, "t1", 0, 0)
			e.Connected()
			tc.do(e)
			if !tc.want(e) {
				w, s := e.Quiet()
				t.Fatalf("quiet %v strict %v", w, s)
			}
			e.Stop()
		})
	}
}

// statusServer serves a recorded log as task t1 of a maria-like daemon
// that keeps the stream open; status gives the task's status at each GET.
func statusServer(t *testing.T, log []byte, status func() string) (string, *atomic.Int32) {
	t.Helper()
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/task/t1":
			gets.Add(1)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"task":{"id":"t1","cwd":"/tmp","status":"`+status()+`","created":1774598400000,"updated":1774598400000,"queued_messages":[]}}`)
		case "/v1/task/t1/events":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(log)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", &gets
}

// TestFollowShortWindowAfterALateRunEnd: when a frame shortens the rule's
// window (the run's end, with the daemon's word in), Synced follows the
// short window from that frame, not the long one the stream was already
// waiting for when the replay began.
func TestFollowShortWindowAfterALateRunEnd(t *testing.T) {
	t.Parallel()
	log, err := os.ReadFile(corpus + "stream_a.head.sse")
	if err != nil {
		t.Fatal(err)
	}
	rule := &runEndRule{waiting: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-rule.waiting: // the long window is set
		case <-r.Context().Done():
			return
		}
		w.Write(log)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	b := open(t, srv.URL+"/v1")
	b.ReplayEnd = func(context.Context, *Client, string) ReplayEnd { return rule }
	var last time.Time
	var took time.Duration
	follow(t, b, "t1", func(u client.Update, _ *followed) bool {
		if len(u.Events) > 0 {
			last = time.Now()
		}
		if u.Synced {
			took = time.Since(last)
		}
		return u.Synced
	})
	if took > 10*time.Second {
		t.Fatalf("synced %v after the run's end: the long window", took)
	}
}

// runEndRule waits a minute for the replay's end, and 20 ms once the last
// frame ends a run. waiting is closed once Follow looked at the quiet of
// the connected stream before any frame (the second call of Quiet: the
// first is the connection's own).
type runEndRule struct {
	QuietEnd
	end     bool
	calls   int
	waiting chan struct{}
}

func (r *runEndRule) Decoded(kind events.Kind, evs []events.Event) {
	r.QuietEnd.Decoded(kind, evs)
	r.end = kind == events.KindPostConversation
}

func (r *runEndRule) Quiet() (time.Duration, bool) {
	if r.calls++; r.calls == 2 {
		close(r.waiting)
	}
	if r.end {
		return 20 * time.Millisecond, true
	}
	return time.Minute, false
}

// TestFollowEvidenceAndUntilIdle: on an idle task whose replay ends a run,
// Synced comes after the short window (the long one is a minute here);
// with UntilIdle, Synced waits for the daemon to stop saying generating,
// asking it at the long window's pace.
func TestFollowEvidenceAndUntilIdle(t *testing.T) {
	t.Parallel()
	log, err := os.ReadFile(corpus + "stream_a.head.sse")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile("../../transcript/testdata/stream_a.head.jsonl")
	base, _ := statusServer(t, log, func() string { return events.StatusIdle })
	b := open(t, base)
	b.ReplayEnd = Evidence(time.Minute, 0)
	start := time.Now()
	f := follow(t, b, "t1", untilSynced)
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("synced after %v: the long window, despite strong evidence", d)
	}
	if got := jsonl(t, f.tl); got != string(want) {
		t.Fatalf("timeline differs:\n%s", got)
	}

	var flip atomic.Int64
	flip.Store(time.Now().Add(time.Hour).UnixNano())
	base, gets := statusServer(t, log, func() string {
		if time.Now().UnixNano() < flip.Load() {
			return events.StatusGenerating
		}
		return events.StatusIdle
	})
	b = open(t, base)
	b.ReplayEnd = Evidence(200*time.Millisecond, 0)
	flip.Store(time.Now().Add(1500 * time.Millisecond).UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tl := events.NewTimeline()
	err = b.FollowWith(ctx, "t1", client.FollowOptions{UntilIdle: true}, func(s client.Step) {
		for _, ev := range s.Events {
			tl.Apply(ev)
		}
		if s.Synced {
			if time.Now().UnixNano() < flip.Load() {
				t.Error("Synced while the daemon said generating")
			}
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || ctx.Err() != context.Canceled {
		t.Fatalf("FollowWith: %v", err)
	}
	if got := jsonl(t, tl); got != string(want) {
		t.Fatalf("timeline differs:\n%s", got)
	}
	if n := gets.Load(); n < 3 || n > 15 {
		t.Errorf("the daemon was asked %d times in 1.5 s (200 ms window)", n)
	}
}

// TestFollowFrames: with Frames, every frame of the replay comes as a Step
// that carries it, those the decoder drops (a reconnect's replay) too.
func TestFollowFrames(t *testing.T) {
	log, err := os.ReadFile(corpus + "stream_b.head.sse")
	if err != nil {
		t.Fatal(err)
	}
	n := bytes.Count(log, []byte("\n\n"))
	base, _ := statusServer(t, log, func() string { return events.StatusIdle })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	frames, news := 0, 0
	err = open(t, base).FollowWith(ctx, "t1", client.FollowOptions{Frames: true}, func(s client.Step) {
		if s.Frame != nil {
			frames++
			if len(s.Frame.Data) == 0 {
				t.Error("a step's frame has no data")
			}
		}
		news += len(s.Events)
		if s.Synced {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if frames != n || news == 0 || news > frames {
		t.Fatalf("%d frame steps (%d new events) for %d frames", frames, news, n)
	}
}

// TestFollowHandsOverALiveFrameAtOnce: once the replay is in, a frame the
// daemon writes reaches the consumer at once, not after a batch's wait.
func TestFollowHandsOverALiveFrameAtOnce(t *testing.T) {
	t.Parallel()
	synced := make(chan struct{})
	var wrote atomic.Int64 // unix nanoseconds
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "event: maria\ndata: {\"id\":\"u0\",\"created\":1774598434766,\"desc\":{\"msg\":\"UserMessage\",\"content\":\"replayed\"}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-synced:
		case <-r.Context().Done():
			return
		}
		wrote.Store(time.Now().UnixNano())
		io.WriteString(w, "event: maria\ndata: {\"id\":\"u1\",\"created\":1774598434767,\"desc\":{\"msg\":\"UserMessage\",\"content\":\"live\"}}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	b := open(t, srv.URL+"/v1")
	b.ReplayEnd = func(context.Context, *Client, string) ReplayEnd { return NewQuietEnd(50 * time.Millisecond) }
	var took time.Duration
	once := false
	follow(t, b, "t1", func(u client.Update, f *followed) bool {
		if u.Synced && !once {
			once = true
			close(synced)
		}
		for _, ev := range u.Events {
			if ev.Text == "live" {
				took = time.Since(time.Unix(0, wrote.Load()))
				return true
			}
		}
		return false
	})
	if took > time.Second {
		t.Errorf("a live frame took %v to reach the consumer", took)
	}
}

// TestFollowHandsOverABurstWhole: events that arrive in one burst, with
// the stream quiet after it, all reach the consumer without waiting for
// another byte: steps cross to Follow's goroutine in batches, and the
// last batch of a burst must not wait for a frame that is not coming.
func TestFollowHandsOverABurstWhole(t *testing.T) {
	t.Parallel()
	const n = 500
	var burst bytes.Buffer
	for i := range n {
		fmt.Fprintf(&burst, "event: maria\ndata: {\"id\":\"u%d\",\"created\":1774598434766,\"desc\":{\"msg\":\"UserMessage\",\"content\":\"message %d\"}}\n\n", i, i)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write(burst.Bytes())
		w.(http.Flusher).Flush()
		<-r.Context().Done() // open and quiet
	}))
	t.Cleanup(srv.Close)
	start := time.Now()
	f := follow(t, open(t, srv.URL+"/v1"), "t1", func(_ client.Update, f *followed) bool {
		return f.tl.Len() == n
	})
	if got := f.tl.Items()[n-1].Text; got != fmt.Sprintf("message %d", n-1) {
		t.Errorf("the last item reads %q", got)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the burst took %v to come through", took)
	}
}

// TestFollowMultiMBOutputArrivesWhole: a replay whose last frame is a
// 12 MiB tool output, written in pieces, reaches the consumer whole, and
// the replay is not said to be in before it, even with a quiet window far
// shorter than the frame takes to arrive and decode.
func TestFollowMultiMBOutputArrivesWhole(t *testing.T) {
	t.Parallel()
	if raceEnabled {
		t.Skip("12 MiB: slow under -race")
	}
	f, text := bigPost("head", "execute_command", randomText(12<<20, 4))
	wire := []byte("event: maria\ndata: {\"id\":\"u0\",\"created\":1774598434766,\"desc\":{\"msg\":\"UserMessage\",\"content\":\"go\"}}\n\nevent: " + f.Name + "\ndata: " + string(f.Data) + "\n\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for rest := wire; len(rest) > 0; {
			k := min(len(rest), 256<<10)
			w.Write(rest[:k])
			w.(http.Flusher).Flush()
			rest = rest[k:]
		}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	b := open(t, srv.URL+"/v1")
	b.ReplayEnd = func(context.Context, *Client, string) ReplayEnd { return NewQuietEnd(time.Millisecond) }
	got := ""
	follow(t, b, "t1", func(u client.Update, _ *followed) bool {
		for _, ev := range u.Events {
			if ev.Tool != nil && ev.Tool.Result != nil {
				got = ev.Tool.Result.Text
			}
		}
		return u.Synced
	})
	if got != text {
		t.Fatalf("the output arrived as %d bytes of %d before the replay was said to be in", len(got), len(text))
	}
}
