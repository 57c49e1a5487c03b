package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// taskServer is a daemon serving one task's recorded log: after each replay
// it closes the stream (as some proxies do) when closing is set, else stays
// open like maria. status gives the task's status at each GET.
type taskServer struct {
	id      string
	log     []byte
	closing bool
	pause   int // if > 0: pause 2 s after this many bytes, inside an event
	status  func() string
	conns   atomic.Int32
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
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"task":%s}`, task())
		case "/v1/task/" + s.id + "/events":
			s.conns.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			log := s.log
			if s.pause > 0 {
				w.Write(log[:s.pause])
				w.(http.Flusher).Flush()
				select {
				case <-time.After(2 * time.Second):
				case <-r.Context().Done():
					return
				}
				log = log[s.pause:]
			}
			w.Write(log)
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

const streamA = "../events/testdata/streams/stream_a.head.sse"

// TestExportEndsWhenTheServerCloses: a server that closes the stream after
// each replay makes export end with the whole transcript (a clean close,
// then a replay with nothing new), where perch used to reconnect forever;
// --until-idle still waits for the daemon to say the run is over; record
// --until-idle ends too, without recording the replays twice; tail follows
// quietly.
func TestExportEndsWhenTheServerCloses(t *testing.T) {
	log, err := os.ReadFile(streamA)
	if err != nil {
		t.Fatal(err)
	}
	want := must(t, run(t, "", "replay", streamA, "--format", "jsonl")).stdout
	const id = "3f2b0000-0000-4000-8000-000000000001"
	idle := func() string { return "idle" }

	s := &taskServer{id: id, log: log, closing: true, status: idle}
	base := s.start(t)
	start := time.Now()
	r := must(t, run(t, "", "export", id, "--url", base, "--format", "jsonl"))
	if r.stdout != want {
		t.Fatalf("export differs from the replay of the log:\n%s\nvs\n%s", r.stdout, want)
	}
	if d := time.Since(start); d > 8*time.Second || s.conns.Load() < 2 {
		t.Errorf("export took %v and %d connections", d, s.conns.Load())
	}

	// --until-idle: the daemon says generating for 2.5 s.
	flip := time.Now().Add(2500 * time.Millisecond)
	s2 := &taskServer{id: id, log: log, closing: true, status: func() string {
		if time.Now().Before(flip) {
			return "generating"
		}
		return "idle"
	}}
	base2 := s2.start(t)
	r = must(t, run(t, "", "export", id, "--url", base2, "--format", "jsonl", "--until-idle"))
	if time.Now().Before(flip) {
		t.Errorf("--until-idle ended while the daemon said generating")
	}
	if r.stdout != want {
		t.Fatalf("--until-idle export differs:\n%s", r.stdout)
	}

	// record --until-idle ends like export, and writes each frame once.
	file := filepath.Join(t.TempDir(), "rec.sse")
	must(t, run(t, "", "record", id, "-o", file, "--until-idle", "--url", base))
	rec, _ := os.ReadFile(file)
	if got, n := strings.Count(string(rec), "event: "), strings.Count(string(log), "event: "); got != n {
		t.Errorf("recorded %d frames of %d", got, n)
	}
	if r := must(t, run(t, "", "replay", file, "--format", "jsonl")); r.stdout != want {
		t.Errorf("the recording replays differently:\n%s", r.stdout)
	}

	// tail follows by reconnecting, says so once, and prints nothing twice.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	r = runCtx(ctx, t, "", "tail", id, "--url", base)
	if r.code != 0 || strings.Count(r.stdout, "What does this project do?") != 1 {
		t.Errorf("tail: %+v", r)
	}
	if strings.Count(r.stderr, "closes the stream after each replay") != 1 || strings.Count(r.stderr, "reconnect") > 2 {
		t.Errorf("tail chatter:\n%s", r.stderr)
	}
}

// TestExportWaitsOutASlowEvent: a server (maria-like, it never closes) that
// stalls for longer than the quiet time in the middle of an event must not
// make export end without that event and the rest.
func TestExportWaitsOutASlowEvent(t *testing.T) {
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
