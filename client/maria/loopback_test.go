package maria

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// resolveTo is a resolver that maps localhost to ips only, like an
// /etc/hosts with a single localhost line.
func resolveTo(t *testing.T, ips ...string) LookupHostFunc {
	return func(_ context.Context, host string) ([]string, error) {
		if host != "localhost" {
			t.Errorf("resolver asked for %q; only localhost should be looked up", host)
			return nil, errors.New("unexpected lookup")
		}
		return ips, nil
	}
}

// dialLog records every address the client dials. It really dials IP
// addresses and refuses any host name, so a test sees whether a name
// reached the dialer unresolved.
type dialLog struct {
	mu    sync.Mutex
	addrs []string
	hang  string // an address whose dial blocks until cancelled
}

func (l *dialLog) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	l.mu.Lock()
	l.addrs = append(l.addrs, addr)
	hang := l.hang
	l.mu.Unlock()
	if addr == hang {
		<-ctx.Done()
		return nil, &net.OpError{Op: "dial", Net: network, Err: ctx.Err()}
	}
	host, _, _ := net.SplitHostPort(addr)
	if net.ParseIP(host) == nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
	}
	return (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
}

// take returns the addresses dialled since the last take.
func (l *dialLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.addrs
	l.addrs = nil
	return out
}

// loopbackDaemon serves GET /v1/tasks and GET /v1/events on one loopback
// address only ("[::1]:0" or "127.0.0.1:0") and returns its port. It skips
// the test when the machine has no IPv6 loopback. Close it with a defer,
// before goleak checks.
func loopbackDaemon(t *testing.T, addr string) (*httptest.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if strings.HasPrefix(addr, "[::1]") {
			t.Skipf("this machine has no IPv6 loopback (listen on %s: %v)", addr, err)
		}
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "localhost:"+portOf(ln.Addr().String()) && !strings.HasPrefix(r.Host, "127.0.0.1:") && !strings.HasPrefix(r.Host, "[::1]:") {
			t.Errorf("Host header %q", r.Host)
		}
		switch r.Method + " " + r.URL.Path {
		case "GET /v1/tasks":
			reply(200, listJSON)(w, r, nil)
		case "GET /v1/events":
			sseHeaders(w)
			writeEvent(w, "daemon.tasks.synchronized", `{"tasks":[]}`)
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	return srv, portOf(ln.Addr().String())
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

// freePort returns a loopback port nothing listens on (just closed), on
// both families as far as a test can tell.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := portOf(ln.Addr().String())
	ln.Close()
	return port
}

// writeDaemonJSON makes a home directory whose daemon.json names port.
func writeDaemonJSON(t *testing.T, port string) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".moonagent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "daemon.json"), []byte(`{"version":"0.1.0","pid":4242,"port":`+port+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

// discoveredClient builds a client the way the CLI does when only
// daemon.json is there.
func discoveredClient(t *testing.T, home string, opts ...Option) *Client {
	t.Helper()
	u, fromFile, err := Discover("", func(string) string { return "" }, home)
	if err != nil || !fromFile {
		t.Fatalf("Discover: %q, %v, %v", u, fromFile, err)
	}
	if !strings.HasPrefix(u, "http://localhost:") {
		t.Fatalf("discovered URL %q is not localhost", u)
	}
	c, err := NewClient(u, append([]Option{WithDiscovered(), WithHeaders(testHeaders())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func listTasks(t *testing.T, c *Client) {
	t.Helper()
	tasks, err := c.Tasks(context.Background())
	if err != nil {
		t.Fatalf("Tasks: %v", err)
	}
	if len(tasks) != 3 {
		t.Fatalf("Tasks: got %d tasks, want 3", len(tasks))
	}
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, " ") == strings.Join(b, " ")
}

// The bug of issue 7: maria on [::1] only, localhost resolving to
// 127.0.0.1 only, nothing but daemon.json to go on.
func TestDiscoveredLocalhostReachesIPv6OnlyDaemon(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, port := loopbackDaemon(t, "[::1]:0")
	defer srv.Close()
	log := &dialLog{}
	c := discoveredClient(t, writeDaemonJSON(t, port), WithLookupHost(resolveTo(t, "127.0.0.1")), withDial(log.dial))
	defer c.hc.CloseIdleConnections()
	listTasks(t, c)
	// A discovered URL tries the daemon's own address first.
	if got, want := log.take(), []string{"[::1]:" + port}; !equalStrings(got, want) {
		t.Errorf("dialled %v, want %v", got, want)
	}
	if c.BaseURL() != "http://localhost:"+port+"/v1" {
		t.Errorf("BaseURL = %q; the URL should still say localhost", c.BaseURL())
	}
}

// The reverse: a daemon (or proxy) on 127.0.0.1 only, localhost resolving
// to ::1 only.
func TestDiscoveredLocalhostReachesIPv4OnlyDaemon(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, port := loopbackDaemon(t, "127.0.0.1:0")
	defer srv.Close()
	log := &dialLog{}
	c := discoveredClient(t, writeDaemonJSON(t, port), WithLookupHost(resolveTo(t, "::1")), withDial(log.dial))
	defer c.hc.CloseIdleConnections()
	listTasks(t, c)
	if got, want := log.take(), []string{"[::1]:" + port, "127.0.0.1:" + port}; !equalStrings(got, want) {
		t.Errorf("dialled %v, want %v", got, want)
	}
}

// The same with the real dialer and the system resolver, whatever this
// machine maps localhost to.
func TestDiscoveredLocalhostSystemResolver(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, port := loopbackDaemon(t, "[::1]:0")
	defer srv.Close()
	c := discoveredClient(t, writeDaemonJSON(t, port))
	defer c.hc.CloseIdleConnections()
	listTasks(t, c)
}

// A --url with localhost tries what localhost resolves to first, then
// falls back to the other loopback family.
func TestExplicitLocalhostFallsBack(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, port := loopbackDaemon(t, "[::1]:0")
	defer srv.Close()
	log := &dialLog{}
	c, err := NewClient("http://localhost:"+port+"/v1", WithLookupHost(resolveTo(t, "127.0.0.1")), withDial(log.dial))
	if err != nil {
		t.Fatal(err)
	}
	defer c.hc.CloseIdleConnections()
	listTasks(t, c)
	if got, want := log.take(), []string{"127.0.0.1:" + port, "[::1]:" + port}; !equalStrings(got, want) {
		t.Errorf("dialled %v, want %v", got, want)
	}
}

// Any other host is dialled as given: an IP literal is not swapped for the
// other family, and a name goes to the dialer unresolved by us.
func TestExplicitOtherHostNoFallback(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, port := loopbackDaemon(t, "[::1]:0")
	defer srv.Close()
	log := &dialLog{}
	opts := []Option{WithLookupHost(resolveTo(t, "::1")), withDial(log.dial), WithHeaders(testHeaders())}

	c, err := NewClient("http://127.0.0.1:"+port+"/v1", opts...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Tasks(context.Background())
	if err == nil {
		t.Fatal("127.0.0.1 reached a daemon that listens on [::1] only")
	}
	noSecret(t, err)
	if got, want := log.take(), []string{"127.0.0.1:" + port}; !equalStrings(got, want) {
		t.Errorf("dialled %v, want %v", got, want)
	}

	c, _ = NewClient("http://daemon.example:"+port+"/v1", opts...)
	_, err = c.Tasks(context.Background())
	if err == nil || !strings.Contains(err.Error(), "check the host name") {
		t.Errorf("unknown host: err = %v", err)
	}
	if got, want := log.take(), []string{"daemon.example:" + port}; !equalStrings(got, want) {
		t.Errorf("dialled %v, want %v", got, want)
	}

	// An explicit [::1] works as given.
	c, _ = NewClient("http://[::1]:"+port+"/v1", opts...)
	defer c.hc.CloseIdleConnections()
	listTasks(t, c)
	if got, want := log.take(), []string{"[::1]:" + port}; !equalStrings(got, want) {
		t.Errorf("dialled %v, want %v", got, want)
	}
}

// Nothing listening: the error names the URL, every address tried and
// what to do, and no header value.
func TestLocalhostNothingAnswersNamesEveryAddress(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	port := freePort(t)
	for _, tc := range []struct {
		name     string
		resolver LookupHostFunc
		dialled  []string // beyond [::1] and 127.0.0.1
		says     string
	}{
		{"resolves to 127.0.0.2", resolveTo(t, "127.0.0.2"), []string{"127.0.0.2:" + port}, "127.0.0.2:" + port},
		{"lookup fails", func(context.Context, string) ([]string, error) { return nil, errors.New("resolver on fire") }, nil, "resolver on fire"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &dialLog{}
			c := discoveredClient(t, writeDaemonJSON(t, port), WithLookupHost(tc.resolver), withDial(log.dial))
			_, err := c.Tasks(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			noSecret(t, err)
			for _, s := range []string{"GET http://localhost:" + port + "/v1/tasks", "[::1]:" + port, "127.0.0.1:" + port,
				"connection refused", "is the daemon running? set --url or PERCH_URL", tc.says} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			want := append([]string{"[::1]:" + port, "127.0.0.1:" + port}, tc.dialled...)
			if got := log.take(); !equalStrings(got, want) {
				t.Errorf("dialled %v, want %v", got, want)
			}
			t.Logf("error: %v", err)
		})
	}
}

// The address that answered is remembered: later dials, for requests and
// streams alike, go straight to it.
func TestLocalhostWinnerRemembered(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, port := loopbackDaemon(t, "[::1]:0")
	defer srv.Close()
	log := &dialLog{}
	// Explicit localhost: 127.0.0.1 (what it resolves to) comes first.
	c, err := NewClient("http://localhost:"+port+"/v1", WithLookupHost(resolveTo(t, "127.0.0.1")), withDial(log.dial), fastTiming())
	if err != nil {
		t.Fatal(err)
	}
	defer c.hc.CloseIdleConnections()
	listTasks(t, c)
	if got, want := log.take(), []string{"127.0.0.1:" + port, "[::1]:" + port}; !equalStrings(got, want) {
		t.Fatalf("first dial: %v, want %v", got, want)
	}
	c.hc.CloseIdleConnections() // force a new connection
	listTasks(t, c)
	if got, want := log.take(), []string{"[::1]:" + port}; !equalStrings(got, want) {
		t.Errorf("second request dialled %v, want %v", got, want)
	}

	// A stream shares the dialer (not the connection pool).
	ctx, cancel := context.WithCancel(context.Background())
	rec := &recorder{}
	done := make(chan error, 1)
	go func() { done <- c.StreamDaemon(ctx, rec.Frame, rec.State) }()
	waitFor(t, "a daemon event", 5*time.Second, func() bool { fs, _ := rec.Snapshot(); return len(fs) >= 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("StreamDaemon returned %v", err)
	}
	if got, want := log.take(), []string{"[::1]:" + port}; !equalStrings(got, want) {
		t.Errorf("stream dialled %v, want %v", got, want)
	}
}

// Happy eyeballs: an address that hangs does not hold the others up for
// the whole dial timeout, and its dial is cancelled once another wins.
func TestLocalhostHangingAddressFallsBackSoon(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, port := loopbackDaemon(t, "[::1]:0")
	defer srv.Close()
	log := &dialLog{hang: "127.0.0.1:" + port}
	c, err := NewClient("http://localhost:"+port+"/v1", WithLookupHost(resolveTo(t, "127.0.0.1")), withDial(log.dial))
	if err != nil {
		t.Fatal(err)
	}
	defer c.hc.CloseIdleConnections()
	start := time.Now()
	listTasks(t, c)
	if d := time.Since(start); d < loopbackFallbackDelay || d > 5*time.Second {
		t.Errorf("took %v; want the fallback delay (%v), not more than a few seconds", d, loopbackFallbackDelay)
	}
	if got, want := log.take(), []string{"127.0.0.1:" + port, "[::1]:" + port}; !equalStrings(got, want) {
		t.Errorf("dialled %v, want %v", got, want)
	}
}
