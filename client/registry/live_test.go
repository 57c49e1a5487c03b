package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/fakedaemon"
)

func mariaFake(t *testing.T) string {
	t.Helper()
	srv, err := fakedaemon.New(fakedaemon.Options{Speed: 20, Seed: 7}).Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv.URL
}

// getJSON is a probe of the kind the other backends have: one GET, a
// status and a JSON shape only that system gives.
func getJSON(path, key string) func(context.Context, client.Config) error {
	return func(ctx context.Context, cfg client.Config) error {
		u := strings.TrimRight(cfg.URL, "/") + path
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		if cfg.Token != "" {
			req.Header.Set("Authorization", "Bearer "+cfg.Token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var m map[string]json.RawMessage
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&m) != nil || m[key] == nil {
			return fmt.Errorf("GET %s: %d, not the answer", u, resp.StatusCode)
		}
		return nil
	}
}

// stub is a backend that only has a name and a URL.
type stub struct {
	client.Backend
	name, url string
}

func (s stub) Name() string { return s.name }
func (s stub) URL() string  { return s.url }

func opener(name string) func(client.Config) (client.Backend, error) {
	return func(cfg client.Config) (client.Backend, error) { return stub{name: name, url: cfg.URL}, nil }
}

// testRegistry has the real maria probe and two probes in the style of
// the other systems', each asking a route only its system answers.
func testRegistry(calls *atomic.Int32) *Registry {
	count := func(p func(context.Context, client.Config) error) func(context.Context, client.Config) ([]events.Task, error) {
		return ProbeOnly(func(ctx context.Context, cfg client.Config) error {
			calls.Add(1)
			return p(ctx, cfg)
		})
	}
	return &Registry{Systems: []System{
		{Name: client.Maria, Probe: count(maria.Probe), Open: maria.Open},
		{Name: client.Suna, Probe: count(getJSON("/agent-runs/active", "active_runs")), Open: opener(client.Suna)},
		{Name: client.Pynchy, Probe: count(getJSON("/api/groups", "groups")), Open: opener(client.Pynchy)},
	}}
}

// imitations of each system's probe answer.
func sunaLike(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer jwt-1" {
			http.Error(w, `{"detail":"Authentication required"}`, http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/v1/agent-runs/active" {
			io.WriteString(w, `{"active_runs": []}`)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func pynchyLike(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/groups" {
			io.WriteString(w, `{"groups": [{"jid": "tui:alice", "name": "alice"}]}`)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestProbeFindsEachSystem: each URL is recognised by its own probe only,
// over loopback HTTP, the real maria fake included.
func TestProbeFindsEachSystem(t *testing.T) {
	for _, tc := range []struct {
		want string
		url  string
	}{
		{client.Maria, mariaFake(t)},
		{client.Suna, sunaLike(t)},
		{client.Pynchy, pynchyLike(t)},
	} {
		t.Run(tc.want, func(t *testing.T) {
			var calls atomic.Int32
			b, err := testRegistry(&calls).Open(context.Background(), "", client.Config{URL: tc.url, Token: "jwt-1"})
			if err != nil {
				t.Fatal(err)
			}
			if b.Name() != tc.want {
				t.Fatalf("found %s, want %s", b.Name(), tc.want)
			}
			if calls.Load() != 3 {
				t.Fatalf("%d probes ran, want 3 (all at once)", calls.Load())
			}
		})
	}
}

// TestNamedBackendIsNotProbed: --backend opens that backend directly.
func TestNamedBackendIsNotProbed(t *testing.T) {
	var calls atomic.Int32
	base := mariaFake(t)
	b, err := testRegistry(&calls).Open(context.Background(), client.Maria, client.Config{URL: base})
	if err != nil || b.Name() != client.Maria || calls.Load() != 0 {
		t.Fatalf("%v %v, %d probes", b, err, calls.Load())
	}
	// The default registry too.
	b, err = Open(context.Background(), client.Maria, client.Config{URL: base})
	if err != nil || b.Name() != client.Maria {
		t.Fatalf("%v %v", b, err)
	}
	if _, err := Open(context.Background(), "attocode", client.Config{URL: base}); !errors.Is(err, ErrUnknownBackend) ||
		!strings.Contains(err.Error(), "maria, suna, pynchy") {
		t.Fatalf("unknown backend: %v", err)
	}
}

// TestDefaultRegistryFindsMaria: the registry perch uses recognises the
// maria fake.
func TestDefaultRegistryFindsMaria(t *testing.T) {
	base := mariaFake(t)
	b, err := Open(context.Background(), "", client.Config{URL: base})
	if err != nil || b.Name() != client.Maria || b.URL() != base {
		t.Fatalf("%v %v", b, err)
	}
}

// TestOpenProbedSessions: the sessions maria's probe read come with the
// backend it opened; with a name there is no probe and no list.
func TestOpenProbedSessions(t *testing.T) {
	base := mariaFake(t)
	ctx := context.Background()
	b, sessions, err := OpenProbed(ctx, "", client.Config{URL: base})
	if err != nil || b.Name() != client.Maria || sessions == nil {
		t.Fatalf("%v %v %v", b, sessions, err)
	}
	want, err := b.Sessions(ctx)
	if err != nil || len(want) != len(sessions) {
		t.Fatalf("probe saw %d sessions, the list has %d (%v)", len(sessions), len(want), err)
	}
	if _, sessions, err := OpenProbed(ctx, client.Maria, client.Config{URL: base}); err != nil || sessions != nil {
		t.Fatalf("named: %v %v", sessions, err)
	}
}

// TestNoBackendAnswers: a server that is none of them gives one error
// naming the URL, every backend and --backend, without the token.
func TestNoBackendAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<h1>hello</h1>")
	}))
	defer srv.Close()
	var calls atomic.Int32
	u := srv.URL + "/v1?token=sekrit-in-url"
	_, err := testRegistry(&calls).Open(context.Background(), "", client.Config{URL: u, Token: "sekrit-token"})
	var none *NoBackendError
	if !errors.As(err, &none) || none.Unreachable {
		t.Fatalf("err %v", err)
	}
	msg := err.Error()
	for _, s := range []string{strings.TrimPrefix(srv.URL, "http://"), "maria, suna or pynchy", "--backend maria|suna|pynchy", "maria: ", "suna: ", "pynchy: "} {
		if !strings.Contains(msg, s) {
			t.Errorf("%q lacks %q", msg, s)
		}
	}
	if strings.Contains(msg, "sekrit") || strings.Count(msg, "\n") > 0 {
		t.Fatalf("%q", msg)
	}
}

// TestUnreachable: nothing listening is told apart from a server that is
// none of ours.
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var calls atomic.Int32
	_, err = testRegistry(&calls).Open(context.Background(), "", client.Config{URL: "http://" + addr + "/v1"})
	var none *NoBackendError
	if !errors.As(err, &none) || !none.Unreachable || !strings.Contains(err.Error(), "nothing answers at http://"+addr) {
		t.Fatalf("err %v", err)
	}
}

// TestProbeTimeout: a server that never answers is given up on after the
// registry's timeout, and the first answer does not wait for slow probes.
func TestProbeTimeout(t *testing.T) {
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer hang.Close()
	defer hang.CloseClientConnections()
	reg := testRegistry(new(atomic.Int32))
	reg.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := reg.Open(context.Background(), "", client.Config{URL: hang.URL + "/v1"})
	if d := time.Since(start); err == nil || d > 5*time.Second {
		t.Fatalf("err %v after %v", err, d)
	}

	var cancelled atomic.Bool
	reg = &Registry{Systems: []System{
		{Name: "slow", Probe: ProbeOnly(func(ctx context.Context, cfg client.Config) error {
			<-ctx.Done()
			cancelled.Store(true)
			return ctx.Err()
		}), Open: opener("slow")},
		{Name: "quick", Probe: ProbeOnly(func(context.Context, client.Config) error { return nil }), Open: opener("quick")},
	}}
	start = time.Now()
	b, err := reg.Open(context.Background(), "", client.Config{URL: "http://x/"})
	if err != nil || b.Name() != "quick" || time.Since(start) > 2*time.Second || !cancelled.Load() {
		t.Fatalf("%v %v after %v, slow probe cancelled: %v", b, err, time.Since(start), cancelled.Load())
	}
}

// TestCallerCancels: a cancelled context is returned as such, not as "no
// backend".
func TestCallerCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reg := &Registry{Systems: []System{{Name: "a", Probe: ProbeOnly(func(ctx context.Context, _ client.Config) error { return ctx.Err() }), Open: opener("a")}}}
	if _, err := reg.Open(ctx, "", client.Config{URL: "http://x/"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:8000/v1":                   "http://localhost:8000/v1",
		"http://h:1/v1/agent-run/r/stream?token=abc": "http://h:1/v1/agent-run/r/stream?token=REDACTED",
		"http://h/x?a=1&token=abc":                   "http://h/x?a=1&token=REDACTED",
		"http://user:pw@h/v1":                        "http://user:xxxxx@h/v1",
		"http://h/%zz?token=abc":                     "(a URL that does not parse)",
		"http://localhost:8484":                      "http://localhost:8484",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	if got := strings.Join(LiveNames(), ","); got != "maria,suna,pynchy" {
		t.Fatalf("names %s", got)
	}
}
