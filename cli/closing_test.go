package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mariab "github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/transcript"
)

// taskServer is a daemon serving one task's recorded log: after each replay
// it closes the stream (as some proxies do) when closing is set, else stays
// open like maria. status gives the task's status at each GET.
type taskServer struct {
	id      string
	log     []byte
	closing bool
	pause   int // if > 0: pause 2 s after this many bytes, inside an event
	// pauses: more places to pause at (byte offsets, ascending), each for
	// pauseFor.
	pauses   []int
	pauseFor time.Duration
	status   func() string
	conns    atomic.Int32
	taskGets atomic.Int32 // GET /task/{id}
}

func (s *taskServer) start(t *testing.T) string {
	t.Helper()
	task := func() string {
		return `{"id":"` + s.id + `","cwd":"/tmp","status":"` + s.status() + `","created":1774598400000,"updated":1774598400000,"web_search":false,"queued_messages":[]}`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/tasks":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"tasks":[%s]}`, task())
		case "/v1/task/" + s.id:
			s.taskGets.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"task":%s}`, task())
		case "/v1/task/" + s.id + "/events":
			s.conns.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			log := s.log
			at, wait := s.pauses, s.pauseFor
			if s.pause > 0 {
				at, wait = []int{s.pause}, 2*time.Second
			}
			done := 0
			for _, p := range at {
				w.Write(log[done:p])
				w.(http.Flusher).Flush()
				select {
				case <-time.After(wait):
				case <-r.Context().Done():
					return
				}
				done = p
			}
			w.Write(log[done:])
			w.(http.Flusher).Flush()
			if !s.closing {
				<-r.Context().Done()
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

const streamA = "../client/maria/testdata/streams/stream_a.head.sse"

// TestExportEndsWhenTheServerCloses: a server that closes the stream after
// each replay makes export end with the whole transcript (a clean close,
// then a replay with nothing new), where perch used to reconnect forever;
// --until-idle still waits for the daemon to say the run is over; record
// --until-idle ends too, without recording the replays twice; tail follows
// quietly.
func TestExportEndsWhenTheServerCloses(t *testing.T) {
	t.Parallel()
	log, err := os.ReadFile(streamA)
	if err != nil {
		t.Fatal(err)
	}
	want := must(t, run(t, "", "replay", streamA, "--format", "jsonl")).stdout
	const id = "3f2b0000-0000-4000-8000-000000000001"
	idle := func() string { return "idle" }
	// closing serves the log to one sub-test, which counts its connections.
	closing := func(t *testing.T) (*taskServer, string) {
		s := &taskServer{id: id, log: log, closing: true, status: idle}
		return s, s.start(t)
	}

	t.Run("export", func(t *testing.T) {
		t.Parallel()
		s, base := closing(t)
		start := time.Now()
		r := must(t, run(t, "", "export", id, "--url", base, "--format", "jsonl"))
		if r.stdout != want {
			t.Fatalf("export differs from the replay of the log:\n%s\nvs\n%s", r.stdout, want)
		}
		if d := time.Since(start); d > 8*time.Second || s.conns.Load() < 2 {
			t.Errorf("export took %v and %d connections", d, s.conns.Load())
		}
	})

	t.Run("until idle", func(t *testing.T) {
		t.Parallel()
		// The daemon says generating for 2.5 s.
		flip := time.Now().Add(2500 * time.Millisecond)
		s2 := &taskServer{id: id, log: log, closing: true, status: func() string {
			if time.Now().Before(flip) {
				return "generating"
			}
			return "idle"
		}}
		base2 := s2.start(t)
		r := must(t, run(t, "", "export", id, "--url", base2, "--format", "jsonl", "--until-idle"))
		if time.Now().Before(flip) {
			t.Errorf("--until-idle ended while the daemon said generating")
		}
		if r.stdout != want {
			t.Fatalf("--until-idle export differs:\n%s", r.stdout)
		}
	})

	t.Run("record", func(t *testing.T) {
		t.Parallel()
		// record --until-idle ends like export, and writes each frame once.
		_, base := closing(t)
		file := filepath.Join(t.TempDir(), "rec.sse")
		must(t, run(t, "", "record", id, "-o", file, "--until-idle", "--url", base))
		rec, _ := os.ReadFile(file)
		if got, n := strings.Count(string(rec), "event: "), strings.Count(string(log), "event: "); got != n {
			t.Errorf("recorded %d frames of %d", got, n)
		}
		if r := must(t, run(t, "", "replay", file, "--format", "jsonl")); r.stdout != want {
			t.Errorf("the recording replays differently:\n%s", r.stdout)
		}
	})

	t.Run("tail", func(t *testing.T) {
		t.Parallel()
		// tail follows by reconnecting, says so once, and prints nothing
		// twice.
		// It runs until it has reconnected three times after the first
		// close: each was a chance to say it again or print again.
		s, base := closing(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		res := make(chan result, 1)
		go func() { res <- runCtx(ctx, t, "", "tail", id, "--url", base) }()
		deadline := time.After(30 * time.Second)
		for s.conns.Load() < 4 {
			select {
			case r := <-res:
				t.Fatalf("tail ended by itself: %+v", r)
			case <-deadline:
				t.Fatalf("tail reconnected %d times in 30 s", s.conns.Load()-1)
			case <-time.After(10 * time.Millisecond):
			}
		}
		cancel()
		r := <-res
		if r.code != 0 || strings.Count(r.stdout, "What does this project do?") != 1 {
			t.Errorf("tail: %+v", r)
		}
		if strings.Count(r.stderr, "closes the stream after each replay") != 1 || strings.Count(r.stderr, "reconnect") > 2 {
			t.Errorf("tail chatter:\n%s", r.stderr)
		}
	})
}

// TestExportWaitsOutASlowEvent: a server (maria-like, it never closes) that
// stalls for longer than the quiet time in the middle of an event must not
// make export end without that event and the rest.
func TestExportWaitsOutASlowEvent(t *testing.T) {
	t.Parallel()
	log, err := os.ReadFile(streamA)
	if err != nil {
		t.Fatal(err)
	}
	want := must(t, run(t, "", "replay", streamA, "--format", "jsonl")).stdout
	const id = "3f2b0000-0000-4000-8000-000000000002"
	// Stall inside the read_file result.
	at := bytes.Index(log, []byte(`"msg":"PostToolCall","tool_call":{"id":"toolu_01VbN4kTq8ZsR2mC6eYp1JhA"`))
	if at < 0 {
		t.Fatal("no read_file result in the log")
	}
	s := &taskServer{id: id, log: log, pause: at, status: func() string { return "idle" }}
	base := s.start(t)
	r := must(t, run(t, "", "export", id, "--url", base, "--format", "jsonl"))
	if r.stdout != want {
		t.Fatalf("export ended early:\n%s\nvs\n%s", r.stdout, want)
	}
}

// exportOpts are the windows and the mode of exportWith.
type exportOpts struct {
	untilIdle bool
	// settle and quick replace maria's quiet windows (0: the defaults).
	settle, quick time.Duration
}

// exportWith runs export's path (followLive over maria's Follow, with the
// given quiet windows) and the jsonl export, and says how long the
// following took.
func exportWith(t *testing.T, base, id string, o exportOpts) (string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var errb bytes.Buffer
	env := Env{Stdout: io.Discard, Stderr: &errb, Getenv: func(string) string { return "" }}
	cl, err := mariab.NewClient(base)
	if err != nil {
		t.Fatal(err)
	}
	task, err := cl.Task(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	b := mariab.New(cl)
	b.ReplayEnd = mariab.Evidence(o.settle, o.quick)
	start := time.Now()
	tl, err := followLive(ctx, env, b, task, liveOpts{untilIdle: o.untilIdle, quiet: true})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("export: %v (stderr %s)", err, errb.String())
	}
	var out bytes.Buffer
	if err := writeExport(&out, tl, "jsonl", "", transcript.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	return out.String(), took
}

// TestExportEndsSoonOnEvidence: the daemon says idle and the replay's last
// frame ends the run, so export ends after a short quiet window, not the
// long one (here a minute); with weak evidence (the daemon says
// generating; the log stops mid-run) it waits for the long window.
func TestExportEndsSoonOnEvidence(t *testing.T) {
	t.Parallel()
	log, err := os.ReadFile(streamA)
	if err != nil {
		t.Fatal(err)
	}
	want := must(t, run(t, "", "replay", streamA, "--format", "jsonl")).stdout
	const id = "3f2b0000-0000-4000-8000-000000000003"
	idle := func() string { return "idle" }

	s := &taskServer{id: id, log: log, status: idle}
	got, took := exportWith(t, s.start(t), id, exportOpts{settle: time.Minute})
	if got != want {
		t.Fatalf("export differs:\n%s\nvs\n%s", got, want)
	}
	if took > 30*time.Second {
		t.Errorf("export waited %v: the long window, despite strong evidence", took)
	}

	// The daemon says generating: the run's end in the log may be an old
	// one, so the long window applies.
	const long = 1500 * time.Millisecond
	gen := &taskServer{id: id, log: log, status: func() string { return "generating" }}
	if _, took := exportWith(t, gen.start(t), id, exportOpts{settle: long}); took < long {
		t.Errorf("export of a generating task ended after %v, before the long window (%v)", took, long)
	}

	// The log stops before the run's end: the long window applies.
	cut := bytes.LastIndex(log, []byte("event: maria\ndata: {"))
	if cut < 0 || !bytes.Contains(log[cut:], []byte(`"PostConversation"`)) {
		t.Fatal("stream A does not end with PostConversation")
	}
	mid := &taskServer{id: id, log: log[:cut], status: idle}
	if _, took := exportWith(t, mid.start(t), id, exportOpts{settle: long}); took < long {
		t.Errorf("export of a replay that stops mid-run ended after %v, before the long window (%v)", took, long)
	}
}

// TestExportWaitsOutPauses: a daemon that pauses mid-replay, for longer
// than the short window, inside events and between them (the last pause
// right before the run's end), still gets everything exported, quickly
// once the run's end is in.
func TestExportWaitsOutPauses(t *testing.T) {
	t.Parallel()
	log, err := os.ReadFile(streamA)
	if err != nil {
		t.Fatal(err)
	}
	want := must(t, run(t, "", "replay", streamA, "--format", "jsonl")).stdout
	const id = "3f2b0000-0000-4000-8000-000000000004"
	var at []int
	// Between events: after every fourth frame.
	for i, n := 0, 0; ; n++ {
		j := bytes.Index(log[i:], []byte("\n\n"))
		if j < 0 {
			break
		}
		i += j + 2
		if n%4 == 3 && i < len(log) {
			at = append(at, i)
		}
	}
	// Inside events: in the middle of a PostToolCall and of the last frame
	// (the run's end), and right before the last frame.
	post := bytes.Index(log, []byte(`"msg":"PostToolCall"`))
	last := bytes.LastIndex(log, []byte("event: maria\n"))
	at = append(at, post+10, last, last+20)
	slices.Sort(at)
	at = slices.Compact(at)
	s := &taskServer{id: id, log: log, pauses: at, pauseFor: 300 * time.Millisecond, status: func() string { return "idle" }}
	got, _ := exportWith(t, s.start(t), id, exportOpts{settle: time.Minute, quick: 20 * time.Millisecond})
	if got != want {
		t.Fatalf("export ended early (pauses at %v):\n%s\nvs\n%s", at, got, want)
	}

	// A frame after the run's end, paused in its middle: the end is in,
	// the daemon says idle, and still export waits for that frame.
	extra := append(slices.Clip(log), "event: maria\ndata: {\"id\":\"u-extra\",\"created\":1774598500000,\"desc\":{\"msg\":\"UserMessage\",\"content\":\"after the end\"}}\n\n"...)
	file := filepath.Join(t.TempDir(), "extra.sse")
	if err := os.WriteFile(file, extra, 0o644); err != nil {
		t.Fatal(err)
	}
	want = must(t, run(t, "", "replay", file, "--format", "jsonl")).stdout
	if !strings.Contains(want, "after the end") {
		t.Fatalf("the extra frame does not show in the export:\n%s", want)
	}
	s = &taskServer{id: id, log: extra, pauses: []int{len(log) + 60}, pauseFor: 300 * time.Millisecond, status: func() string { return "idle" }}
	// (The frame does not end a run: the long window follows it.)
	if got, _ := exportWith(t, s.start(t), id, exportOpts{settle: time.Second, quick: 20 * time.Millisecond}); got != want {
		t.Fatalf("export ended inside a frame after the run's end:\n%s\nvs\n%s", got, want)
	}
}

// TestUntilIdleWaitsForTheDaemon: with --until-idle, a replay that ends a
// run is not enough while the daemon says generating (maria, stream kept
// open).
func TestUntilIdleWaitsForTheDaemon(t *testing.T) {
	t.Parallel()
	log, err := os.ReadFile(streamA)
	if err != nil {
		t.Fatal(err)
	}
	want := must(t, run(t, "", "replay", streamA, "--format", "jsonl")).stdout
	const id = "3f2b0000-0000-4000-8000-000000000005"
	var flip atomic.Int64
	flip.Store(time.Now().Add(time.Hour).UnixNano())
	s := &taskServer{id: id, log: log, status: func() string {
		if time.Now().UnixNano() < flip.Load() {
			return "generating"
		}
		return "idle"
	}}
	base := s.start(t)
	flip.Store(time.Now().Add(2 * time.Second).UnixNano())
	r := must(t, run(t, "", "export", id, "--url", base, "--format", "jsonl", "--until-idle"))
	if time.Now().UnixNano() < flip.Load() {
		t.Errorf("--until-idle ended while the daemon said generating")
	}
	if r.stdout != want {
		t.Fatalf("--until-idle export differs:\n%s", r.stdout)
	}
}

// TestUntilIdleAsksCalmly: with --until-idle, a daemon that said idle when
// the stream started and generating since is asked again at the long
// window's pace, not the short one's, until it says idle.
func TestUntilIdleAsksCalmly(t *testing.T) {
	t.Parallel()
	log, err := os.ReadFile(streamA)
	if err != nil {
		t.Fatal(err)
	}
	const id = "3f2b0000-0000-4000-8000-000000000007"
	var flip atomic.Int64
	flip.Store(time.Now().Add(time.Hour).UnixNano())
	var s *taskServer
	s = &taskServer{id: id, log: log, status: func() string {
		if s.taskGets.Load() <= 2 || time.Now().UnixNano() >= flip.Load() {
			return "idle" // the first answers (the test's, the rule's at the start), and the end
		}
		return "generating"
	}}
	base := s.start(t)
	flip.Store(time.Now().Add(1500 * time.Millisecond).UnixNano())
	got, _ := exportWith(t, base, id, exportOpts{untilIdle: true, settle: 300 * time.Millisecond})
	if time.Now().UnixNano() < flip.Load() {
		t.Errorf("--until-idle ended while the daemon said generating")
	}
	if want := must(t, run(t, "", "replay", streamA, "--format", "jsonl")).stdout; got != want {
		t.Errorf("export differs:\n%s", got)
	}
	// exportWith asks once itself; then about one question per 300 ms.
	if n := s.taskGets.Load(); n > 12 {
		t.Errorf("the daemon was asked %d times in 1.5 s", n)
	}
}
