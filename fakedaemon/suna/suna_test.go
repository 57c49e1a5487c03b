package suna

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPyDumps(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{obj{{"type", "ping"}}, `{"type": "ping"}`},
		{obj{{"a", "é😀\n\"\x01"}, {"n", math.NaN()}, {"i", math.Inf(1)}, {"f", 2.0}, {"l", []any{1, true, nil}}},
			`{"a": "\u00e9\ud83d\ude00\n\"\u0001", "n": NaN, "i": Infinity, "f": 2.0, "l": [1, true, null]}`},
		{map[string]any{"b": 1, "a": obj{}}, `{"a": {}, "b": 1}`},
	} {
		if got := string(pyDumps(tc.in)); got != tc.want {
			t.Errorf("pyDumps = %s, want %s", got, tc.want)
		}
	}
}

type harness struct {
	t    *testing.T
	s    *Server
	base string
	hc   *http.Client
}

func start(t *testing.T, opts Options) *harness {
	t.Helper()
	if opts.Ping == 0 {
		opts.Ping = 20 * time.Millisecond
	}
	s := New(opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(ctx, ln) }()
	tr := &http.Transport{}
	t.Cleanup(func() { cancel(); <-done; s.Close(); tr.CloseIdleConnections() })
	return &harness{t: t, s: s, base: "http://" + ln.Addr().String() + "/v1", hc: &http.Client{Transport: tr}}
}

func (h *harness) get(path, token string) (int, []byte) {
	h.t.Helper()
	req, _ := http.NewRequest("GET", h.base+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// frames reads a stream until the server closes it or n data lines came
// (n < 0: until closed). It fails on any line that is not data or blank.
func (h *harness) frames(path string, n int) []string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", h.base+path, nil)
	resp, err := h.hc.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		h.t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && (n < 0 || len(out) < n) {
		line := sc.Text()
		switch {
		case line == "":
		case strings.HasPrefix(line, "data: "):
			out = append(out, line[len("data: "):])
		default:
			h.t.Fatalf("a line that is not data: %q", line)
		}
	}
	return out
}

func waitRun(t *testing.T, s *Server, id, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for s.RunStatus(id) != want {
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s, want %s", id, s.RunStatus(id), want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestStreamCatchUpResumeAndEnd(t *testing.T) {
	t.Parallel()
	h := start(t, Options{FrameDelay: -1})
	_, rid, err := h.s.Start("", "hello")
	if err != nil {
		t.Fatal(err)
	}
	waitRun(t, h.s, rid, "completed")
	all := h.frames("/agent-run/"+rid+"/stream", -1)
	if len(all) != h.s.Frames(rid) {
		t.Fatalf("catch-up: %d frames, stored %d", len(all), h.s.Frames(rid))
	}
	var ids []string
	for _, f := range all {
		i := strings.LastIndex(f, `, "_event_id": "`)
		if i < 0 || !strings.HasSuffix(f, `"}`) {
			t.Fatalf("no _event_id last: %s", f)
		}
		ids = append(ids, f[i+len(`, "_event_id": "`):len(f)-2])
		if strings.Contains(f, `":"`) {
			t.Fatalf("not Python's separators: %s", f)
		}
	}
	if last := all[len(all)-1]; !strings.Contains(last, `"type": "status", "status": "completed"`) {
		t.Errorf("last frame %s", last)
	}
	rest := h.frames("/agent-run/"+rid+"/stream?last_id="+ids[4], -1)
	if len(rest) != len(all)-5 || rest[0] != all[5] {
		t.Errorf("resume after frame 5: %d frames, first %s", len(rest), rest[0])
	}
	// Rows of the stream and the history share their message ids.
	_, body := h.get("/threads/"+h.s.Threads()[0].ID+"/messages?optimized=false&order=asc", "")
	var hist struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(body, &hist); err != nil {
		t.Fatal(err)
	}
	var ids2 []string
	for _, m := range hist.Messages {
		if m["type"] == "assistant" {
			ids2 = append(ids2, m["message_id"].(string))
			if _, ok := m["content"].(map[string]any); !ok {
				t.Errorf("history content is not an object: %v", m["content"])
			}
		}
	}
	if len(ids2) != 2 {
		t.Fatalf("history has %d assistant rows", len(ids2))
	}
	for _, id := range ids2 {
		if !strings.Contains(strings.Join(all, "\n"), `"message_id": "`+id+`"`) {
			t.Errorf("assistant row %s is not on the stream", id)
		}
	}
	// Newest first by default; optimized drops the content of non-user rows.
	_, body = h.get("/threads/"+h.s.Threads()[0].ID+"/messages", "")
	var opt struct {
		Messages []map[string]any `json:"messages"`
	}
	_ = json.Unmarshal(body, &opt)
	if opt.Messages[len(opt.Messages)-1]["type"] != "user" {
		t.Error("the default order is not newest first")
	}
	for _, m := range opt.Messages {
		if _, has := m["content"]; has != (m["type"] == "user") {
			t.Errorf("optimized row %v", m)
		}
	}
}

func TestStopWritesNothingThenStatus(t *testing.T) {
	t.Parallel()
	h := start(t, Options{FrameDelay: -1, Hold: true, IdleTicks: 2})
	_, rid, _ := h.s.Start("", "slow")
	for h.s.Frames(rid) < 5 {
		time.Sleep(time.Millisecond)
	}
	n := h.s.Frames(rid)
	if !h.s.stopRun(rid) {
		t.Fatal("no run")
	}
	waitRun(t, h.s, rid, "stopped")
	if h.s.Frames(rid) != n {
		t.Errorf("a stop wrote %d frames", h.s.Frames(rid)-n)
	}
	// A connection that catches up sees pings only after the data.
	got := h.frames("/agent-run/"+rid+"/stream", n+3)
	for _, f := range got[n:] {
		if f != `{"type": "ping"}` {
			t.Errorf("after a stop: %s", f)
		}
	}
	// One that sent nothing reads the status after a few quiet ticks.
	var last string
	for _, f := range got[:n] {
		last = f[strings.LastIndex(f, `"_event_id": "`)+14 : len(f)-2]
	}
	end := h.frames("/agent-run/"+rid+"/stream?last_id="+last, -1)
	if len(end) != 3 || end[2] != `{"type": "status", "status": "stopped", "message": "Stopped by cancellation_event"}` {
		t.Errorf("resumed stream of a stopped run: %q", end)
	}
}

func TestCachedRunningNeverEnds(t *testing.T) {
	t.Parallel()
	h := start(t, Options{FrameDelay: -1, CachedRunning: true, IdleTicks: 1})
	_, rid, _ := h.s.Start("", "slow")
	waitRun(t, h.s, rid, "completed")
	last := ""
	for _, f := range h.frames("/agent-run/"+rid+"/stream", -1) {
		last = f
	}
	id := last[strings.LastIndex(last, `"_event_id": "`)+14 : len(last)-2]
	for _, f := range h.frames("/agent-run/"+rid+"/stream?last_id="+id, 5) {
		if f != `{"type": "ping"}` {
			t.Errorf("cached running: %s", f)
		}
	}
	_, body := h.get("/agent-run/"+rid, "")
	if !strings.Contains(string(body), `"status":"completed"`) {
		t.Errorf("the status route: %s", body)
	}
}

func TestDropEvery(t *testing.T) {
	t.Parallel()
	h := start(t, Options{FrameDelay: -1, DropEvery: 4})
	_, rid, _ := h.s.Start("", "hello")
	waitRun(t, h.s, rid, "completed")
	if got := h.frames("/agent-run/"+rid+"/stream", -1); len(got) != 4 {
		t.Errorf("a connection carried %d frames, want 4", len(got))
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	h := start(t, Options{Token: "s3cret", FrameDelay: -1})
	_, rid, _ := h.s.Start("", "hello")
	for _, tc := range []struct {
		path, token string
		want        int
	}{
		{"/threads", "", 401},
		{"/threads", "nope", 403},
		{"/threads", "s3cret", 200},
		{"/threads?token=s3cret", "", 401}, // the query token is for the stream only
		{"/agent-run/" + rid + "/stream?token=nope", "", 403},
		{"/health", "", 200},
	} {
		if code, _ := h.get(tc.path, tc.token); code != tc.want {
			t.Errorf("%s with %q: %d, want %d", tc.path, tc.token, code, tc.want)
		}
	}
	waitRun(t, h.s, rid, "completed")
	if got := h.frames("/agent-run/"+rid+"/stream?token=s3cret", -1); len(got) == 0 {
		t.Error("the stream with ?token= sent nothing")
	}
}

func TestStartBusyAndRestart(t *testing.T) {
	t.Parallel()
	s := New(Options{FrameDelay: -1, Hold: true})
	defer s.Close()
	tid, rid, err := s.Start("", "slow")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Start(tid, "again"); err != errBusy {
		t.Errorf("a second run on a running thread: %v", err)
	}
	// Serve, stop, serve again on the same address: the run is still there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	for i := 0; i < 2; i++ {
		if i == 1 {
			if ln, err = net.Listen("tcp", addr); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Serve(ctx, ln) }()
		tr := &http.Transport{}
		resp, err := (&http.Client{Transport: tr}).Get("http://" + addr + "/v1/agent-run/" + rid)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		if !strings.Contains(string(b), `"status":"running"`) {
			t.Errorf("serve %d: %s", i, b)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	s.Release()
	waitRun(t, s, rid, "completed")
}

func TestBenchScenario(t *testing.T) {
	t.Parallel()
	s := New(Options{})
	defer s.Close()
	_, rid, _ := s.Start("", "bench")
	waitRun(t, s, rid, "completed")
	if n := s.Frames(rid); n < BenchFrames-50 || n > BenchFrames+50 {
		t.Errorf("bench run: %d frames, want about %d", n, BenchFrames)
	}
}

// Hold holds the runs started after it until Release; runs started before
// it, or after Release, are not held.
func TestHoldAndReleaseAgain(t *testing.T) {
	t.Parallel()
	s := New(Options{FrameDelay: -1})
	defer s.Close()
	tid, rid, err := s.Start("", "hello")
	if err != nil {
		t.Fatal(err)
	}
	waitRun(t, s, rid, "completed")
	for range 2 {
		s.Hold()
		_, rid, err = s.Start(tid, "again")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // time to end, were it not held
		if st := s.RunStatus(rid); st != "running" {
			t.Fatalf("a run started while holding is %s", st)
		}
		s.Release()
		waitRun(t, s, rid, "completed")
	}
	_, rid, err = s.Start(tid, "free")
	if err != nil {
		t.Fatal(err)
	}
	waitRun(t, s, rid, "completed")
}
