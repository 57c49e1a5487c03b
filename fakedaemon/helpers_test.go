package fakedaemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is one daemon on loopback plus a client for it.
type env struct {
	t      *testing.T
	d      *Daemon
	srv    *Server
	url    string
	client *http.Client
}

func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	if opts.Speed == 0 {
		opts.Speed = 200
	}
	d := New(opts)
	srv, err := d.Start("")
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	e := &env{t: t, d: d, srv: srv, url: srv.URL, client: &http.Client{Transport: tr}}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		tr.CloseIdleConnections()
	})
	return e
}

// do sends a request and returns status, headers and body.
func (e *env) do(method, path, body string) (int, http.Header, string) {
	e.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.url+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// rawDo sends a request whose target is written verbatim (so a query string
// or odd path reaches the server as is).
func (e *env) rawDo(method, target string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, strings.TrimSuffix(e.url, "/v1")+"/", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.URL.Opaque = target
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// createTask posts /v1/task and returns the task id and message id.
func (e *env) createTask(message, cwd string) (string, string) {
	e.t.Helper()
	body := map[string]any{"name": message, "message": map[string]any{"role": "user", "content": message}, "web_search": false}
	if cwd != "" {
		body["cwd"] = cwd
	}
	b, _ := json.Marshal(body)
	st, _, resp := e.do("POST", "/task", string(b))
	if st != 201 {
		e.t.Fatalf("create: %d %s", st, resp)
	}
	var v struct {
		Task    struct{ ID string }
		Message struct{ ID string }
	}
	if err := json.Unmarshal([]byte(resp), &v); err != nil {
		e.t.Fatal(err)
	}
	return v.Task.ID, v.Message.ID
}

func (e *env) post(id, text string) (string, bool) {
	e.t.Helper()
	b, _ := json.Marshal(map[string]any{"message": map[string]any{"role": "user", "content": text}, "web_search": false})
	st, _, resp := e.do("POST", "/task/"+id+"/message", string(b))
	if st != 200 {
		e.t.Fatalf("post: %d %s", st, resp)
	}
	var v struct {
		ID     string
		Queued bool
	}
	if err := json.Unmarshal([]byte(resp), &v); err != nil {
		e.t.Fatal(err)
	}
	return v.ID, v.Queued
}

// sseFrame is one parsed frame plus its exact bytes.
type sseFrame struct {
	event, data, raw string
}

// msg is the maria variant of a frame ("" for other events).
func (f sseFrame) msg() string {
	var v struct {
		Msg  string
		Desc struct{ Msg string }
	}
	_ = json.Unmarshal([]byte(f.data), &v)
	if v.Desc.Msg != "" {
		return v.Desc.Msg
	}
	return v.Msg
}

// desc decodes the variant's fields (desc, or the flat docs object).
func (f sseFrame) desc() map[string]any {
	var v map[string]any
	_ = json.Unmarshal([]byte(f.data), &v)
	if d, ok := v["desc"].(map[string]any); ok {
		return d
	}
	return v
}

func (f sseFrame) id() any {
	var v map[string]any
	_ = json.Unmarshal([]byte(f.data), &v)
	return v["id"]
}

// stream is an open SSE connection read by a plain bufio.Reader.
type stream struct {
	t      *testing.T
	resp   *http.Response
	frames chan sseFrame
	cancel context.CancelFunc
	errc   chan error
}

func (e *env) open(path string) *stream {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+path, nil)
	resp, err := e.client.Do(req)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		e.t.Fatalf("open %s: %d %s", path, resp.StatusCode, b)
	}
	s := &stream{t: e.t, resp: resp, frames: make(chan sseFrame, 1024), cancel: cancel, errc: make(chan error, 1)}
	go s.read()
	e.t.Cleanup(s.close)
	return s
}

func (s *stream) close() {
	s.cancel()
	s.resp.Body.Close()
	for range s.frames { // wait for the reader goroutine to end
	}
}

// read parses frames strictly: "event: x\n", "data: y\n", "\n".
func (s *stream) read() {
	defer close(s.frames)
	br := bufio.NewReader(s.resp.Body)
	for {
		var raw bytes.Buffer
		var f sseFrame
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				s.errc <- err
				return
			}
			raw.WriteString(line)
			if line == "\n" {
				break
			}
			switch {
			case strings.HasPrefix(line, "event: "):
				f.event = strings.TrimSuffix(strings.TrimPrefix(line, "event: "), "\n")
			case strings.HasPrefix(line, "data: "):
				f.data = strings.TrimSuffix(strings.TrimPrefix(line, "data: "), "\n")
			default:
				f.event = "BAD LINE: " + line
			}
		}
		f.raw = raw.String()
		s.frames <- f
	}
}

func (s *stream) next(timeout time.Duration) (sseFrame, bool) {
	select {
	case f, ok := <-s.frames:
		return f, ok
	case <-time.After(timeout):
		return sseFrame{}, false
	}
}

// until reads frames up to and including the first one for which stop is
// true.
func (s *stream) until(stop func(sseFrame) bool) []sseFrame {
	s.t.Helper()
	var out []sseFrame
	for {
		f, ok := s.next(10 * time.Second)
		if !ok {
			s.t.Fatalf("stream ended or timed out after %d frames; last: %v", len(out), tail(out))
		}
		out = append(out, f)
		if stop(f) {
			return out
		}
	}
}

func (s *stream) take(n int) []sseFrame {
	s.t.Helper()
	i := 0
	return s.until(func(sseFrame) bool { i++; return i == n })
}

func isMsg(m string) func(sseFrame) bool { return func(f sseFrame) bool { return f.msg() == m } }

func tail(fs []sseFrame) []string {
	var out []string
	for _, f := range fs[max(0, len(fs)-5):] {
		out = append(out, f.event+" "+f.msg())
	}
	return out
}

// shape lists frames as "snapshot:<data>" or the maria variant.
func shape(fs []sseFrame) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		if f.event == eventSnapshot {
			out = append(out, "snap:"+f.data)
			continue
		}
		out = append(out, f.msg())
	}
	return out
}

func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("%s:\n got %s\nwant %s", what, gb, wb)
	}
}
