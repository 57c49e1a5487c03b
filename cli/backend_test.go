package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/testproxy"
)

// stubBackend is an in-memory live backend without a server queue and,
// unless caps says otherwise, without cancel (like pynchy or Suna).
type stubBackend struct {
	name, url string
	caps      client.Capabilities
	mu        sync.Mutex
	busy      bool
	sent      []string
}

func (s *stubBackend) Name() string                      { return s.name }
func (s *stubBackend) URL() string                       { return s.url }
func (s *stubBackend) Capabilities() client.Capabilities { return s.caps }

func (s *stubBackend) Sessions(context.Context) ([]events.Task, error) {
	return []events.Task{{ID: "chat-alice", Name: "alice", Status: events.StatusIdle}, {ID: "chat-bob", Name: "bob", Status: events.StatusGenerating}}, nil
}

func (s *stubBackend) Session(ctx context.Context, q string) (events.Task, error) {
	ts, _ := s.Sessions(ctx)
	for _, t := range ts {
		if strings.HasPrefix(t.ID, q) && q != "" {
			return t, nil
		}
	}
	return events.Task{}, fmt.Errorf("no session %q", q)
}

func (s *stubBackend) Follow(ctx context.Context, id string, on func(client.Update)) error {
	s.mu.Lock()
	var evs []events.Event
	for i, text := range s.sent {
		evs = append(evs, events.Event{Kind: events.KindUserMessage, ID: fmt.Sprint("u", i), Text: text})
	}
	s.mu.Unlock()
	on(client.Update{Events: evs, Synced: true})
	<-ctx.Done()
	return ctx.Err()
}

func (s *stubBackend) Send(_ context.Context, id string, m client.Message) (client.SendResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy {
		return client.SendResult{}, fmt.Errorf("session %s: %w", id, client.ErrBusy)
	}
	s.sent = append(s.sent, m.Text)
	return client.SendResult{ID: fmt.Sprint("run-", len(s.sent))}, nil
}

func (s *stubBackend) Cancel(context.Context, string) ([]events.QueuedMessage, error) {
	return nil, fmt.Errorf("%s has no cancel endpoint: %w", s.name, client.ErrUnsupported)
}

func (s *stubBackend) Create(context.Context, client.CreateRequest) (events.Task, error) {
	return events.Task{}, client.ErrUnsupported
}

// withStub makes perch's registry answer every URL as the stub (maria is
// listed but not live: it has no probe).
func withStub(s client.Backend, state string, env map[string]string) func(*Env) {
	return func(e *Env) {
		e.registry = func() *registry.Registry {
			return &registry.Registry{Systems: []registry.System{
				{Name: client.Maria},
				{Name: s.Name(), Probe: registry.ProbeOnly(func(context.Context, client.Config) error { return nil }),
					Open: func(cfg client.Config) (client.Backend, error) { return s, nil }},
			}}
		}
		e.Getenv = func(k string) string {
			if k == "XDG_STATE_HOME" {
				return state
			}
			return env[k]
		}
	}
}

func stubRun(t *testing.T, tweak func(*Env), args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return runEnv(ctx, t, tweak, "", args...)
}

// TestCommandsThroughABackend: tasks, send and cancel reach a backend
// that is not maria through the Backend interface; the probe is named on
// stderr; a follow-up to a running session without a server queue is
// held by perch and printed as queued; cancel without Cancel exits 1 with
// a sentence.
func TestCommandsThroughABackend(t *testing.T) {
	t.Parallel()
	s := &stubBackend{name: client.Pynchy, url: "http://pynchy.test:8484", caps: client.Capabilities{Send: true, PipesFollowUps: true}}
	state := t.TempDir()
	tw := withStub(s, state, nil)
	r := must(t, stubRun(t, tw, "tasks", "--url", s.url, "-v"))
	if !strings.Contains(r.stdout, "chat-ali") || !strings.Contains(r.stdout, "bob") {
		t.Fatalf("tasks: %s", r.stdout)
	}
	if r.stderr != "perch: http://pynchy.test:8484 answers as pynchy\n" {
		t.Fatalf("probe note: %q", r.stderr)
	}
	r = must(t, stubRun(t, tw, "send", "chat-a", "hello", "--url", s.url))
	if !strings.HasPrefix(r.stdout, "sent (message run-1)") {
		t.Fatalf("send: %+v", r)
	}
	s.mu.Lock()
	s.busy = true
	s.mu.Unlock()
	r = must(t, stubRun(t, tw, "send", "chat-a", "later", "--json", "--url", s.url))
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out["queued"] != true || out["id"] == "" || len(out) != 2 {
		t.Fatalf("send while busy: %+v", r)
	}
	s.mu.Lock()
	s.busy = false
	s.mu.Unlock()
	r = must(t, stubRun(t, tw, "send", "chat-a", "after", "--url", s.url))
	if !strings.Contains(r.stderr, "first delivered 1 earlier message") {
		t.Fatalf("held message not delivered first: %+v", r)
	}
	s.mu.Lock()
	got := strings.Join(s.sent, "|")
	s.mu.Unlock()
	if got != "hello|later|after" {
		t.Fatalf("backend received %q", got)
	}
	// No cancel: exit 1, one sentence, nothing pretended.
	r = stubRun(t, tw, "cancel", "chat-b", "--url", s.url)
	if r.code != 1 || !strings.Contains(r.stderr, "pynchy at http://pynchy.test:8484 cannot stop a run") || strings.Contains(r.stdout, "Cancelled") {
		t.Fatalf("cancel: %+v", r)
	}
	// No create either.
	r = stubRun(t, tw, "new", "--url", s.url, "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "cannot start a session") || !strings.Contains(r.stderr, "hi") {
		t.Fatalf("new: %+v", r)
	}
	// --backend names it: no probe, no note.
	r = must(t, stubRun(t, tw, "--backend", "pynchy", "--url", s.url, "tasks"))
	if r.stderr != "" {
		t.Fatalf("named backend still probed: %q", r.stderr)
	}
	r = must(t, stubRun(t, withStub(s, state, map[string]string{"PERCH_BACKEND": "pynchy", "PERCH_URL": s.url}), "tasks"))
	if r.stderr != "" || !strings.Contains(r.stdout, "alice") {
		t.Fatalf("PERCH_BACKEND: %+v", r)
	}
}

// TestBackendFlagErrors: bad names are usage errors; a backend other
// than maria needs a URL; a backend at another system's URL says so.
func TestBackendFlagErrors(t *testing.T) {
	t.Parallel()
	_, base := fake(t, "head", 20)
	for _, tc := range []struct {
		args []string
		env  map[string]string
		code int
		want string
	}{
		{[]string{"tasks", "--backend", "attocode", "--url", base}, nil, 2, "--backend must be one of maria, suna, pynchy"},
		{[]string{"tasks", "--url", base}, map[string]string{"PERCH_BACKEND": "nope"}, 2, "PERCH_BACKEND must be one of"},
		{[]string{"tasks", "--backend", "suna"}, nil, 2, "--backend suna needs the server's URL"},
		// tail and export follow any backend: Suna's at a maria URL says what to check.
		{[]string{"tail", "x", "--url", base}, map[string]string{"PERCH_BACKEND": "suna"}, 1, "that --url is the API base"},
		{[]string{"tasks", "--url", base, "--token", "a b"}, nil, 2, "invalid --token"},
	} {
		r := runEnv(context.Background(), t, func(e *Env) { e.Getenv = func(k string) string { return tc.env[k] } }, "", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
	// maria is probed and named (with -v, or when stderr is a terminal;
	// a script's stderr is for errors); with --backend maria it is not.
	r := must(t, run(t, "", "-v", "tasks", "--url", base))
	if r.stderr != "perch: "+base+" answers as maria\n" {
		t.Fatalf("probe note %q", r.stderr)
	}
	r = must(t, runEnv(context.Background(), t, func(e *Env) { e.StderrIsTerminal = true }, "", "tasks", "--url", base))
	if r.stderr != "perch: "+base+" answers as maria\n" {
		t.Fatalf("probe note on a terminal %q", r.stderr)
	}
	if r = must(t, run(t, "", "tasks", "--url", base)); r.stderr != "" {
		t.Fatalf("probe note without a terminal or -v: %q", r.stderr)
	}
	r = must(t, run(t, "", "tasks", "--url", base, "--backend", "maria"))
	if r.stderr != "" {
		t.Fatalf("stderr %q", r.stderr)
	}
	// Connection flags may come before the command, in both forms.
	r = must(t, run(t, "", "--backend=maria", "--token=abcd-efgh", "--url", base, "tasks", "--json"))
	if r.stderr != "" || !strings.HasPrefix(r.stdout, "[") {
		t.Fatalf("hoisted flags: %+v", r)
	}
	// --help shows the flags, and no default token.
	r = must(t, run(t, "", "send", "--help"))
	if !strings.Contains(r.stdout, "-backend") || !strings.Contains(r.stdout, "-token") {
		t.Fatalf("help: %s", r.stdout)
	}
}

// TestTokenNeverPrinted: the token (flag or PERCH_TOKEN) reaches the
// server as a bearer token on calls and streams, and is never printed,
// even when a server echoes it back in an error.
func TestTokenNeverPrinted(t *testing.T) {
	t.Parallel()
	d, base := fake(t, "head", 20)
	id := strings.TrimSpace(must(t, run(t, "", "new", "Say hello", "--url", base, "--cwd", t.TempDir())).stdout)
	var mu sync.Mutex
	seen := map[string]int{}
	proxy := testproxy.Forward(t, base, func(r *http.Request) {
		// Probes of other systems' health routes carry no token, on
		// purpose; every maria call and stream must.
		if strings.HasPrefix(r.URL.Path, "/v1/task") || r.URL.Path == "/v1/events" {
			mu.Lock()
			seen[r.Header.Get("Authorization")]++
			mu.Unlock()
		}
	})
	const token = "sekrit-jwt-value"
	pbase := proxy.URL + "/v1"
	withToken := func(e *Env) { e.Getenv = func(k string) string { return map[string]string{"PERCH_TOKEN": token}[k] } }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, args := range [][]string{
		{"tasks", "--url", pbase},
		{"send", id, "read the readme", "--url", pbase},
		{"export", id, "--until-idle", "--url", pbase, "--format", "jsonl"},
	} {
		r := runEnv(ctx, t, withToken, "", args...)
		if r.code != 0 || strings.Contains(r.stdout+r.stderr, token) {
			t.Fatalf("%v: %+v", args, r)
		}
	}
	r := must(t, run(t, "", "tasks", "--url", pbase, "--token", token))
	if strings.Contains(r.stdout+r.stderr, token) {
		t.Fatalf("token printed: %+v", r)
	}
	mu.Lock()
	if len(seen) != 1 || seen["Bearer "+token] < 5 {
		t.Errorf("Authorization headers seen: %v", seen)
	}
	mu.Unlock()
	if got := d.Received(id); len(got) != 2 {
		t.Fatalf("daemon received %q", got)
	}

	// A server that echoes the token in its errors: redacted on stderr.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"code":401,"message":"token `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+` expired"}}`)
	}))
	defer echo.Close()
	for _, args := range [][]string{
		{"tasks", "--url", echo.URL + "/v1", "--backend", "maria", "--token", token},
		{"tasks", "--url", echo.URL + "/v1", "--token", token},
		{"export", "x", "--url", echo.URL + "/v1", "--token", token},
	} {
		r := run(t, "", args...)
		if r.code != 1 || strings.Contains(r.stdout+r.stderr, token) || !strings.Contains(r.stderr, echo.URL) {
			t.Errorf("%v: %+v", args, r)
		}
	}
}
