package fakedaemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is an io.Writer the test can read while Run writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var bannerRE = regexp.MustCompile(`^fake maria daemon \((\w+)\) listening on (http://127\.0\.0\.1:\d+/v1) \((demo|replayed) task ([0-9a-f-]{36})\)\n$`)

func startRun(t *testing.T, ctx context.Context, opts Options, replay string) (chan error, []string) {
	t.Helper()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, "", opts, replay, out) }()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if m := bannerRE.FindStringSubmatch(out.String()); m != nil {
			return done, m
		}
		select {
		case err := <-done:
			t.Fatalf("Run returned early: %v (output %q)", err, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("no banner: %q", out.String())
	return nil, nil
}

func TestRunShutdownRoute(t *testing.T) {
	done, m := startRun(t, context.Background(), Options{Speed: 200}, "")
	if m[1] != "head" || m[3] != "demo" {
		t.Errorf("banner %v", m)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	resp, err := c.Get(m[2] + "/task/" + m[4])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("demo task: %d", resp.StatusCode)
	}
	resp, err = c.Post(m[2]+"/shutdown", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "{}" {
		t.Errorf("shutdown: %d %s", resp.StatusCode, b)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after shutdown")
	}
}

func TestRunReplayAndContext(t *testing.T) {
	rec := "event: maria.queued_messages.synchronized\ndata: []\n\n" +
		"event: maria\ndata: {\"id\":\"00000000-0000-4000-8000-000000000001\",\"created\":1774598400000,\"desc\":{\"msg\":\"PreConversation\"}}\n\n" +
		"event: maria\ndata: {\"id\":\"00000000-0000-4000-8000-000000000002\",\"created\":1774598400500,\"desc\":{\"msg\":\"PostConversation\"}}\n\n"
	path := filepath.Join(t.TempDir(), "rec.sse")
	if err := os.WriteFile(path, []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, m := startRun(t, ctx, Options{Speed: 50, Dialect: DialectLegacy}, path)
	if m[1] != "legacy" || m[3] != "replayed" {
		t.Errorf("banner %v", m)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if err := Run(context.Background(), "", Options{}, filepath.Join(t.TempDir(), "missing"), io.Discard); err == nil {
		t.Error("missing replay file accepted")
	}
}

func TestResumeConflictsAndKeywords(t *testing.T) {
	e := newEnv(t, Options{Seed: 20})
	id, _ := e.d.AddStoppedTask("old")
	e.d.mu.Lock()
	cwd := e.d.tasks[id].cwd
	e.d.mu.Unlock()
	if _, err := e.d.CreateTask(CreateRequest{Cwd: cwd}); err != nil {
		t.Fatal(err)
	}
	st, h, body := e.do("POST", "/task/"+id+"/message", `{"message":{"role":"user","content":"x"}}`)
	if st != 409 || h.Get("Content-Type") != "" || !strings.HasPrefix(body, `{"error":{"code":-1,"message":"A running task already exists for the specified 'cwd': `) {
		t.Errorf("resume conflict: %d %q %s", st, h.Get("Content-Type"), body)
	}
	id2, _ := e.d.AddStoppedTask("gone")
	e.d.mu.Lock()
	os.RemoveAll(e.d.tasks[id2].cwd)
	e.d.mu.Unlock()
	st, _, body = e.do("GET", "/task/"+id2+"/status", "")
	if st != 404 || !strings.Contains(body, `"message":"Cannot resume conversation: working directory has been removed","metadata":{"cwd":"`) {
		t.Errorf("resume missing cwd: %d %s", st, body)
	}

	// "explain" must not trigger the todo script, "Tests" must trigger tests.
	e.d.mu.Lock()
	tk := e.d.tasks[id]
	plain := e.d.script(tk, "Please explain the latest change")
	tests := e.d.script(tk, "Tests?")
	e.d.mu.Unlock()
	if len(plain) != 1 || len(tests) != 2 || tests[0].calls[0].name != "execute_command" {
		t.Errorf("keywords: %d %d", len(plain), len(tests))
	}
}

// TestWriteToFileAppends: write_to_file really appends in the task's temp
// cwd (docs/protocol.md §7.4), so the task's files and read_file agree with it.
func TestWriteToFileAppends(t *testing.T) {
	e := newEnv(t, Options{})
	id, _ := e.createTask("write the changelog", "")
	s := e.open("/task/" + id + "/events")
	defer s.close()
	s.until(isMsg("PostConversation"))
	_, _, body := e.do("GET", "/task/"+id, "")
	var v struct{ Task struct{ Cwd string } }
	if err := json.Unmarshal([]byte(body), &v); err != nil || v.Task.Cwd == "" {
		t.Fatalf("task: %s", body)
	}
	entry := "## Unreleased\n\n- Fix word counting in `internal/count`.\n"
	check := func(want string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(v.Task.Cwd, "CHANGELOG.md"))
		if err != nil || string(b) != want {
			t.Fatalf("CHANGELOG.md = %q, %v; want %q", b, err, want)
		}
	}
	check(entry)
	e.post(id, "write the changelog again")
	s.until(isMsg("PostConversation"))
	check(entry + "\n" + entry)
}
