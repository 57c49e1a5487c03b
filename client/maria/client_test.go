package maria

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
)

const secret = "s3cret-token-value"

// testHeaders is what every test client sends; the value must never show up
// in an error.
func testHeaders() http.Header {
	return http.Header{"X-Proxy-Auth": {secret}}
}

// canned serves fixed answers by "METHOD /path" and records requests.
type canned struct {
	t       *testing.T
	routes  map[string]func(w http.ResponseWriter, r *http.Request, body []byte)
	lastReq *http.Request
	body    []byte
}

func newCanned(t *testing.T) (*canned, *Client, *httptest.Server) {
	t.Helper()
	cs := &canned{t: t, routes: map[string]func(http.ResponseWriter, *http.Request, []byte){}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		cs.lastReq, cs.body = r, body
		if got := r.Header.Get("X-Proxy-Auth"); got != secret {
			t.Errorf("%s %s: header X-Proxy-Auth = %q, want the configured one", r.Method, r.URL.Path, got)
		}
		h, ok := cs.routes[r.Method+" "+r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"code":-1,"message":"Unknown endpoint: `+r.URL.Path+`"}}`)
			return
		}
		h(w, r, body)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL+"/v1/", WithHeaders(testHeaders()))
	if err != nil {
		t.Fatal(err)
	}
	return cs, c, srv
}

func reply(status int, body string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func noSecret(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Errorf("error text leaks a header value: %v", err)
	}
}

const (
	idA      = "3f2b1c0d-1111-4222-8333-444455556666"
	idB      = "3f99aa00-1111-4222-8333-444455556666"
	idC      = "e3a1c9d2-7b4f-4f6a-9c8e-1d2b3a4c5e6f"
	taskJSON = `{"id":"` + idC + `","cwd":"/home/alice/wordfreq","port":53817,"status":"idle","created":1774598395000,"updated":1774598395000,"web_search":false,"queued_messages":[{"id":"q1","message":{"role":"user","content":"hi"}}],"model":"m","name":"What does this project do?"}`
	listJSON = `{"tasks":[{"name":"fix tests","id":"` + idA + `","cwd":"/a","status":"stopped","created":1,"updated":2,"web_search":false},{"id":"` + idB + `","cwd":"/b","port":1,"status":"idle","created":1,"updated":1,"web_search":false,"queued_messages":[],"model":"m"},` + taskJSON + `]}`
)

func TestNewValidatesURL(t *testing.T) {
	good := map[string]string{
		"http://localhost:8090/v1":        "http://localhost:8090/v1",
		"http://localhost:8090/v1/":       "http://localhost:8090/v1",
		" https://proxy.example/maria/v1": "https://proxy.example/maria/v1",
		"http://[::1]:8090/v1":            "http://[::1]:8090/v1",
	}
	for in, want := range good {
		c, err := NewClient(in)
		if err != nil {
			t.Errorf("NewClient(%q): %v", in, err)
			continue
		}
		if c.BaseURL() != want {
			t.Errorf("NewClient(%q).BaseURL() = %q, want %q", in, c.BaseURL(), want)
		}
	}
	bad := []string{"", "localhost:8090/v1", "ftp://x/v1", "http:///v1", "http://localhost:8090", "http://localhost:8090/v2",
		"http://localhost:8090/v1?x=1", "http://user:pw@localhost:8090/v1", "http://localhost:8090/v1#f", "http://local host/v1"}
	for _, in := range bad {
		if _, err := NewClient(in); err == nil {
			t.Errorf("NewClient(%q): no error", in)
		} else if strings.Contains(err.Error(), "pw@") {
			t.Errorf("NewClient(%q): error shows credentials: %v", in, err)
		}
	}
}

func TestTasksAndTask(t *testing.T) {
	cs, c, srv := newCanned(t)
	cs.routes["GET /v1/tasks"] = reply(200, listJSON)
	cs.routes["GET /v1/task/"+idC] = reply(200, `{"task":`+taskJSON+`}`)
	ctx := context.Background()

	tasks, err := c.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 3 || tasks[0].ID != idA || tasks[0].Name != "fix tests" || tasks[0].Status != "stopped" || tasks[2].Port != 53817 {
		t.Fatalf("Tasks = %+v", tasks)
	}
	task, err := c.Task(ctx, idC)
	if err != nil {
		t.Fatal(err)
	}
	if task.ID != idC || task.Model != "m" || len(task.QueuedMessages) != 1 || task.QueuedMessages[0].Text != "hi" {
		t.Fatalf("Task = %+v", task)
	}

	// Daemon error format with metadata.
	_, err = c.Task(ctx, "nope")
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 404 || ae.Code != -1 || ae.Method != "GET" || ae.URL != srv.URL+"/v1/task/nope" {
		t.Fatalf("Task(nope) err = %#v", err)
	}
	if !IsNotFound(err) {
		t.Errorf("IsNotFound(%v) = false", err)
	}
	// Consumers that know no maria see the same answer as backend's.
	var he *client.HTTPError
	if !errors.As(err, &he) || he.Status != 404 || he.URL != ae.URL || he.Message != ae.Message {
		t.Errorf("as a client.HTTPError: %#v", he)
	}
	// Ids are path-escaped: a slash can't reach another route.
	_, err = c.Task(ctx, "../tasks")
	if !IsNotFound(err) || !strings.Contains(err.Error(), "/v1/task/..%2Ftasks") {
		t.Errorf("Task(../tasks) err = %v", err)
	}
	noSecret(t, err)
}

func TestErrorFormats(t *testing.T) {
	cs, c, srv := newCanned(t)
	ctx := context.Background()
	msgPath := "/v1/task/" + idC + "/message"
	cases := []struct {
		name       string
		status     int
		body       string
		code       int
		message    string
		wantString string
	}{
		{"daemon metadata", 409, `{"error":{"code":-1,"message":"A running task already exists for the specified 'cwd': /x","metadata":{"cwd":"/x"}}}`, -1,
			"A running task already exists for the specified 'cwd': /x",
			"POST " + srv.URL + msgPath + ": 409 Conflict: A running task already exists for the specified 'cwd': /x"},
		{"JsonError data", 400, `{"error":{"code":400,"message":"Invalid request body","data":{}}}`, 400, "Invalid request body",
			"POST " + srv.URL + msgPath + ": 400 Bad Request: Invalid request body"},
		{"json string", 400, `"Invalid JSON in request body: x"`, 0, "Invalid JSON in request body: x", ""},
		{"html", 404, "<h1>404 Not Found</h1>\n", 0, "<h1>404 Not Found</h1>", ""},
		{"empty", 502, "", 0, "", "POST " + srv.URL + msgPath + ": 502 Bad Gateway"},
		{"error string", 500, `{"error":"boom"}`, 0, "boom", ""},
		{"copilot", 500, `{"error":{"message":"device code failed"}}`, 0, "device code failed", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs.routes["POST "+msgPath] = reply(tc.status, tc.body)
			_, err := c.Send(ctx, idC, "hello", false)
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want *APIError", err)
			}
			if ae.Status != tc.status || ae.Code != tc.code || ae.Message != tc.message {
				t.Errorf("APIError = %+v", ae)
			}
			if tc.wantString != "" && err.Error() != tc.wantString {
				t.Errorf("Error() = %q\nwant      %q", err.Error(), tc.wantString)
			}
			noSecret(t, err)
		})
	}
}

func TestCreateTask(t *testing.T) {
	cs, c, _ := newCanned(t)
	cs.routes["POST /v1/task"] = reply(201, "{\n  \"task\": "+taskJSON+",\n  \"message\": {\n    \"id\": \"9d0b\",\n    \"queued\": false\n  }\n}")
	ctx := context.Background()

	res, err := c.CreateTask(ctx, CreateTaskRequest{Name: "n", Cwd: "/w", Message: "hello", WebSearch: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Task.ID != idC || res.MessageID != "9d0b" || res.Queued {
		t.Errorf("CreateTask = %+v", res)
	}
	wantBody := `{"name":"n","message":{"role":"user","content":"hello"},"cwd":"/w","web_search":true}`
	if string(cs.body) != wantBody {
		t.Errorf("body = %s\nwant   %s", cs.body, wantBody)
	}
	if ct := cs.lastReq.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}

	cs.routes["POST /v1/task"] = reply(201, `{"task":`+taskJSON+`}`)
	res, err = c.CreateTask(ctx, CreateTaskRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if string(cs.body) != `{}` || res.MessageID != "" {
		t.Errorf("empty request: body %s, result %+v", cs.body, res)
	}

	cs.routes["POST /v1/task"] = reply(404, `{"error":{"code":-1,"message":"Specified 'cwd' path does not exist: /x","metadata":{"cwd":"/x"}}}`)
	_, err = c.CreateTask(ctx, CreateTaskRequest{Cwd: "/x"})
	if !IsNotFound(err) || !strings.Contains(err.Error(), "path does not exist: /x") {
		t.Errorf("err = %v", err)
	}
}

func TestSend(t *testing.T) {
	cs, c, _ := newCanned(t)
	path := "POST /v1/task/" + idC + "/message"
	cs.routes[path] = reply(200, `{"id":"c0ffee00","queued":true}`)
	ctx := context.Background()
	res, err := c.Send(ctx, idC, "Also add a CHANGELOG entry.", false)
	if err != nil || res != (SendResult{ID: "c0ffee00", Queued: true}) {
		t.Fatalf("Send = %+v, %v", res, err)
	}
	if want := `{"message":{"role":"user","content":"Also add a CHANGELOG entry."},"web_search":false}`; string(cs.body) != want {
		t.Errorf("body = %s\nwant   %s", cs.body, want)
	}
	cs.routes[path] = reply(200, "")
	res, err = c.Send(ctx, idC, "x", true)
	if err != nil || res != (SendResult{}) {
		t.Errorf("empty 200: Send = %+v, %v", res, err)
	}
	if !strings.HasSuffix(string(cs.body), `"web_search":true}`) {
		t.Errorf("body = %s", cs.body)
	}
}

func TestCancel(t *testing.T) {
	cs, c, _ := newCanned(t)
	path := "POST /v1/task/" + idC + "/cancel"
	ctx := context.Background()
	cs.routes[path] = reply(200, `{"pending_messages":[{"id":"6b6b","message":{"role":"user","content":"Actually, only run the parser benchmarks."},"web_search":false}]}`)
	q, err := c.Cancel(ctx, idC)
	if err != nil || len(q) != 1 || q[0].ID != "6b6b" || q[0].Text != "Actually, only run the parser benchmarks." {
		t.Fatalf("Cancel = %+v, %v", q, err)
	}
	cs.routes[path] = reply(200, `{"pending_messages":[]}`)
	if q, err := c.Cancel(ctx, idC); err != nil || len(q) != 0 {
		t.Errorf("Cancel (none pending) = %+v, %v", q, err)
	}

	cs.routes[path] = reply(404, `{"error":{"code":-1,"message":"No running task to cancel."}}`)
	q, err = c.Cancel(ctx, idC)
	if !errors.Is(err, client.ErrNotRunning) || q != nil {
		t.Fatalf("Cancel (idle) = %+v, %v; want client.ErrNotRunning", q, err)
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 404 || !strings.Contains(err.Error(), "No running task to cancel.") {
		t.Errorf("Cancel (idle) err = %v", err)
	}

	cs.routes[path] = reply(404, `{"error":{"code":-1,"message":"Task not found: `+idC+`"}}`)
	_, err = c.Cancel(ctx, idC)
	if errors.Is(err, client.ErrNotRunning) || !IsNotFound(err) {
		t.Errorf("Cancel (unknown task) err = %v; want a plain 404", err)
	}
}

func TestQueuedModelsStatus(t *testing.T) {
	cs, c, _ := newCanned(t)
	ctx := context.Background()
	cs.routes["GET /v1/task/"+idC+"/queued-messages"] = reply(200, `[{"id":"a","message":{"role":"user","content":"one"}},{"id":"b","message":{"role":"user","content":[{"type":"text","text":"two"}]}}]`)
	cs.routes["GET /v1/models"] = reply(200, `{"models":[{"name":"anthropic/claude-sonnet-4.5"},{"name":"codex/gpt-5"}]}`)
	cs.routes["GET /v1/task/"+idC+"/status"] = reply(200, `{"status":"generating","web_search":false}`)

	q, err := c.QueuedMessages(ctx, idC)
	if err != nil || len(q) != 2 || q[0].Text != "one" || q[1].Text != "two" {
		t.Errorf("QueuedMessages = %+v, %v", q, err)
	}
	m, err := c.Models(ctx)
	if err != nil || strings.Join(m, ",") != "anthropic/claude-sonnet-4.5,codex/gpt-5" {
		t.Errorf("Models = %v, %v", m, err)
	}
	s, err := c.Status(ctx, idC)
	if err != nil || s != "generating" {
		t.Errorf("Status = %q, %v", s, err)
	}
	cs.routes["GET /v1/models"] = reply(200, `{"models":[]}`)
	if m, err := c.Models(ctx); err != nil || len(m) != 0 {
		t.Errorf("Models (none) = %v, %v", m, err)
	}
}

func TestBadBodies(t *testing.T) {
	cs, c, srv := newCanned(t)
	ctx := context.Background()
	// A 200 whose JSON stops short.
	cs.routes["GET /v1/tasks"] = reply(200, `{"tasks":[{"id":"abc","cwd":"/`)
	_, err := c.Tasks(ctx)
	if err == nil || !strings.Contains(err.Error(), srv.URL+"/v1/tasks") || !strings.Contains(err.Error(), "unreadable response") {
		t.Errorf("truncated JSON: err = %v", err)
	}
	// A connection cut mid-body (fewer bytes than Content-Length).
	cs.routes["GET /v1/models"] = func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, `{"models":[`)
	}
	_, err = c.Models(ctx)
	if err == nil || !strings.Contains(err.Error(), srv.URL+"/v1/models") || !strings.Contains(err.Error(), "PERCH_URL") {
		t.Errorf("cut body: err = %v", err)
	}
	// Not JSON at all.
	cs.routes["GET /v1/task/"+idC+"/status"] = reply(200, "<html>login</html>")
	_, err = c.Status(ctx, idC)
	if err == nil || !strings.Contains(err.Error(), "<html>login</html>") {
		t.Errorf("html body: err = %v", err)
	}
	// Empty body where JSON is needed.
	cs.routes["GET /v1/task/"+idC+"/status"] = reply(200, "")
	_, err = c.Status(ctx, idC)
	if err == nil || !strings.Contains(err.Error(), "empty response body") {
		t.Errorf("empty body: err = %v", err)
	}
	noSecret(t, err)
}

func TestTransportErrors(t *testing.T) {
	// Connection refused: a port that was just freed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := NewClient("http://"+addr+"/v1", WithHeaders(testHeaders()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Tasks(context.Background())
	if err == nil || !strings.Contains(err.Error(), "GET http://"+addr+"/v1/tasks") || !strings.Contains(err.Error(), "is the daemon running? set --url or PERCH_URL") {
		t.Errorf("refused: err = %v", err)
	}
	noSecret(t, err)

	// A daemon that doesn't answer in time.
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, _ = NewClient(srv.URL+"/v1", WithHeaders(testHeaders()))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = c.Models(ctx)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not answer in time") {
		t.Errorf("timeout: err = %v", err)
	}
}

func TestHTTPSUntrustedCertFails(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"models":[]}`)
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL+"/v1", WithHeaders(testHeaders()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Models(context.Background())
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted cert: err = %v", err)
	}
	noSecret(t, err)
	// The same server is fine with a client that trusts its cert, which
	// shows the failure above is about trust, not https as such.
	c, _ = NewClient(srv.URL+"/v1", WithHTTPClient(srv.Client()))
	if _, err := c.Models(context.Background()); err != nil {
		t.Errorf("trusted cert: %v", err)
	}
}

func TestResolveTask(t *testing.T) {
	cs, c, _ := newCanned(t)
	cs.routes["GET /v1/tasks"] = reply(200, listJSON)
	ctx := context.Background()
	for q, want := range map[string]string{idC: idC, "e3a": idC, "3f2": idA, "3F99": idB, idA: idA} {
		got, err := c.ResolveTask(ctx, q)
		if err != nil || got.ID != want {
			t.Errorf("ResolveTask(%q) = %s, %v; want %s", q, got.ID, err, want)
		}
	}
	_, err := c.ResolveTask(ctx, "3f")
	var amb *AmbiguousTaskError
	if !errors.As(err, &amb) || !errors.Is(err, client.ErrAmbiguousTask) || len(amb.Candidates) != 2 {
		t.Fatalf("ResolveTask(3f) err = %v", err)
	}
	for _, s := range []string{"3f2b1c0d (fix tests)", "3f99aa00 (unnamed)"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("ambiguous error %q lacks %q", err, s)
		}
	}
	_, err = c.ResolveTask(ctx, "zz")
	var none *client.NoTaskError
	if !errors.As(err, &none) || !errors.Is(err, client.ErrNoTask) || err.Error() != `no task matches "zz"` {
		t.Errorf("ResolveTask(zz) err = %v", err)
	}
	if _, err := c.ResolveTask(ctx, " "); !errors.Is(err, client.ErrNoTask) {
		t.Errorf("ResolveTask(blank) err = %v", err)
	}
}

func TestDiscover(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	home := t.TempDir()

	if u, fromFile, err := Discover("http://flag/v1", env(map[string]string{"PERCH_URL": "http://env/v1"}), home); err != nil || u != "http://flag/v1" || fromFile {
		t.Errorf("flag: %q, %v, %v", u, fromFile, err)
	}
	if u, fromFile, err := Discover("", env(map[string]string{"PERCH_URL": "http://env/v1"}), home); err != nil || u != "http://env/v1" || fromFile {
		t.Errorf("env: %q, %v, %v", u, fromFile, err)
	}
	_, _, err := Discover("", env(nil), home)
	if err == nil {
		t.Fatal("missing daemon.json: no error")
	}
	for _, s := range []string{"--url", "PERCH_URL", filepath.Join(home, ".moonagent", "daemon.json"), "does not exist"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("missing file error %q lacks %q", err, s)
		}
	}
	dir := filepath.Join(home, ".moonagent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, "daemon.json"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"version":"0.1.0","pid":4242,"port":53001}`)
	u, fromFile, err := Discover("", env(nil), home)
	if err != nil || u != "http://localhost:53001/v1" || !fromFile {
		t.Errorf("daemon.json: %q, %v, %v", u, fromFile, err)
	}
	if _, err := NewClient(u); err != nil {
		t.Errorf("discovered URL rejected by New: %v", err)
	}
	for _, bad := range []string{`{"port":0}`, `{"pid":1}`, `not json`, `{"port":"x"}`, `{"port":70000}`} {
		write(bad)
		if u, _, err := Discover("", env(nil), home); err == nil || !strings.Contains(err.Error(), "--url") {
			t.Errorf("daemon.json %s: %q, %v", bad, u, err)
		}
	}
	if _, _, err := Discover("", env(nil), ""); err == nil || !strings.Contains(err.Error(), "PERCH_URL") {
		t.Errorf("no home: %v", err)
	}
}

// The JSON bodies above are hand-written; make sure they parse, so a typo
// there can't hide a real failure.
func TestFixturesAreJSON(t *testing.T) {
	for _, s := range []string{taskJSON, listJSON} {
		if !json.Valid([]byte(s)) {
			t.Errorf("invalid fixture: %s", s)
		}
	}
}
