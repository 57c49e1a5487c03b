package sse

import (
	"bytes"
	"context"
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

	"github.com/perch-tui/perch/internal/ssetest"
	"go.uber.org/goleak"
)

const (
	secret = "s3cret-token-value"
	idC    = "e3a1c9d2-7b4f-4f6a-9c8e-1d2b3a4c5e6f"
)

// testConfig follows u with reconnect timing that keeps tests quick
// without touching the defaults.
func testConfig(u string) Config {
	return Config{
		URL:     func() string { return u },
		Initial: 10 * time.Millisecond, Max: 40 * time.Millisecond, CleanCloseDelay: 20 * time.Millisecond,
		Server: "a test server",
	}
}

// taskURL is a maria task's events URL on base.
func taskURL(base string) string { return base + "/v1/task/" + idC + "/events" }

// withHeaders adds the header whose value must never show in an error.
func withHeaders(c Config) Config {
	c.Header = http.Header{"X-Proxy-Auth": {secret}}
	return c
}

func noSecret(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Errorf("error text leaks a secret: %v", err)
	}
}

// The shared stream-test helpers, under this package's names.
type recorder = ssetest.Recorder[ConnState]

var (
	waitFor    = ssetest.WaitFor
	sseHeaders = ssetest.Headers
	writeEvent = ssetest.WriteEvent
)

// startStream runs Subscribe in a goroutine; the returned func cancels it
// and returns its error.
func startStream(t *testing.T, c Config, rec *recorder) (stop func() error, done <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	go func() { ch <- Subscribe(ctx, c, rec.Frame, rec.State) }()
	return func() error {
		cancel()
		select {
		case err := <-ch:
			return err
		case <-time.After(5 * time.Second):
			t.Fatal("stream did not return after cancel")
			return nil
		}
	}, ch
}

func hasPhase(states []ConnState, p Phase) bool {
	for _, s := range states {
		if s.Phase == p {
			return true
		}
	}
	return false
}

func TestStreamCleanCloseResumes(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var conns atomic.Int32
	var badHeader atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/task/"+idC+"/events" || r.Header.Get("X-Proxy-Auth") != secret || r.Header.Get("Accept") != "text/event-stream" {
			badHeader.Store(fmt.Sprintf("%s %q", r.URL.Path, r.Header))
		}
		n := conns.Add(1)
		sseHeaders(w)
		// Every connection replays the same log, like the daemon.
		writeEvent(w, "maria.queued_messages.synchronized", "[]")
		for i := 0; i < 3; i++ {
			writeEvent(w, "maria", fmt.Sprintf(`{"i":%d}`, i))
		}
		if n >= 3 {
			<-r.Context().Done()
		}
		// Return: a clean close, which r3labs alone would not survive.
	}))
	defer srv.Close()
	c := withHeaders(testConfig(taskURL(srv.URL)))
	rec := &recorder{}
	stop, _ := startStream(t, c, rec)
	waitFor(t, "three connections' frames", 5*time.Second, func() bool { return len(rec.Data()) >= 12 })
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("stream returned %v, want context.Canceled", err)
	}
	if v := badHeader.Load(); v != nil {
		t.Errorf("a request lacked the path or headers: %v", v)
	}
	frames, states := rec.Snapshot()
	if len(frames) != 12 {
		t.Errorf("%d frames, want 12", len(frames))
	}
	for i, f := range frames {
		wantName, wantData := "maria", fmt.Sprintf(`{"i":%d}`, i%4-1)
		if i%4 == 0 {
			wantName, wantData = "maria.queued_messages.synchronized", "[]"
		}
		if f.Name != wantName || string(f.Data) != wantData {
			t.Errorf("frame %d = %s %s, want %s %s", i, f.Name, f.Data, wantName, wantData)
		}
	}
	// connecting, live, (reconnecting, live)×2
	var phases []string
	for _, s := range states {
		phases = append(phases, s.Phase.String())
		if s.Since.IsZero() {
			t.Errorf("state %v without Since", s)
		}
	}
	want := "connecting live reconnecting live reconnecting live"
	if got := strings.Join(phases, " "); got != want {
		t.Errorf("states = %s\nwant     %s", got, want)
	}
	for _, s := range states {
		if s.Phase == PhaseReconnecting && (!errors.Is(s.Err, ErrStreamClosed) || s.Attempt != 1 || s.RetryIn <= 0) {
			t.Errorf("reconnecting state = %+v", s)
		}
	}
}

func TestStreamTruncatedEventNeverDelivered(t *testing.T) {
	for _, mode := range []string{"abort", "clean close"} {
		t.Run(mode, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			var conns atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := conns.Add(1)
				sseHeaders(w)
				writeEvent(w, "maria", `{"whole":1}`)
				if n == 1 {
					io.WriteString(w, "event: maria\ndata: {\"half\":tr")
					w.(http.Flusher).Flush()
					if mode == "abort" {
						panic(http.ErrAbortHandler)
					}
					return
				}
				writeEvent(w, "maria", `{"whole":2}`)
				<-r.Context().Done()
			}))
			defer srv.Close()
			c := testConfig(taskURL(srv.URL))
			rec := &recorder{}
			stop, _ := startStream(t, c, rec)
			waitFor(t, "the second connection's frames", 5*time.Second, func() bool { return len(rec.Data()) >= 3 })
			if err := stop(); !errors.Is(err, context.Canceled) {
				t.Errorf("stream returned %v", err)
			}
			got := strings.Join(rec.Data(), " ")
			if got != `{"whole":1} {"whole":1} {"whole":2}` {
				t.Errorf("frames = %s", got)
			}
			_, states := rec.Snapshot()
			var re *ConnState
			for i := range states {
				if states[i].Phase == PhaseReconnecting {
					re = &states[i]
					break
				}
			}
			// Either way the cut is an error (retried with backoff), not a
			// clean close: the half event proves the stream was broken.
			if re == nil || re.Err == nil || !strings.Contains(re.Err.Error(), "unexpected EOF") || !strings.Contains(re.Err.Error(), srv.URL) {
				t.Errorf("reconnecting state = %+v", re)
			}
		})
	}
}

func TestStreamLargeEvents(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	payload := func(n int) string {
		// JSON-looking bytes with a prime-length period, so a chunk that
		// went missing or was repeated would not line up.
		const unit = "abcdefghijklmnopqrstuvwxyz0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ-_.,;:!?()[]{}<>~=+*&%$#@^|/0123xx"
		body := strings.Repeat(unit, n/97+1)[:n-len(`{"text":""}`)]
		return `{"text":"` + body + `"}`
	}
	small, big := payload(5<<20), payload(40<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		writeEvent(w, "maria", `{"before":1}`)
		writeEvent(w, "maria", small)
		// Written in pieces with flushes, as a real server streams it.
		io.WriteString(w, "event: maria\ndata: ")
		for rest := big; len(rest) > 0; {
			k := min(len(rest), 1<<20)
			io.WriteString(w, rest[:k])
			w.(http.Flusher).Flush()
			rest = rest[k:]
		}
		io.WriteString(w, "\n\n")
		writeEvent(w, "maria", `{"after":1}`)
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := testConfig(taskURL(srv.URL))
	rec := &recorder{}
	start := time.Now()
	stop, _ := startStream(t, c, rec)
	waitFor(t, "all four frames", 60*time.Second, func() bool {
		fs, _ := rec.Snapshot()
		return len(fs) >= 4
	})
	elapsed := time.Since(start)
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("stream returned %v", err)
	}
	frames, states := rec.Snapshot()
	if len(frames) != 4 || string(frames[0].Data) != `{"before":1}` || string(frames[3].Data) != `{"after":1}` {
		t.Fatalf("%d frames", len(frames))
	}
	if !bytes.Equal(frames[1].Data, []byte(small)) || !bytes.Equal(frames[2].Data, []byte(big)) {
		t.Errorf("large events corrupted: %d and %d bytes, want %d and %d", len(frames[1].Data), len(frames[2].Data), len(small), len(big))
	}
	if hasPhase(states, PhaseReconnecting) {
		t.Errorf("large events caused a reconnect: %v", states)
	}
	t.Logf("5 MiB + 40 MiB delivered in %v", elapsed)
}

func TestStreamStatusCodes(t *testing.T) {
	cases := []struct {
		status    int
		body      string
		permanent bool
		msg       string
	}{
		{http.StatusNoContent, "", true, "204 No Content"},
		{http.StatusNotFound, `{"error":{"code":-1,"message":"Task not found: ` + idC + `"}}`, true, "404 Not Found: Task not found: " + idC},
		{http.StatusBadRequest, `{"error":{"code":-1,"message":"Invalid UUID: x"}}`, true, "400 Bad Request: Invalid UUID: x"},
		{http.StatusInternalServerError, `{"error":{"code":-1,"message":"boom"}}`, false, "500 Internal Server Error: boom"},
		{http.StatusTooManyRequests, "slow down", false, "429 Too Many Requests: slow down"},
		{http.StatusRequestTimeout, "", false, "408 Request Timeout"},
		{http.StatusOK, "<html>sign in</html>", true, "200 OK: not an event stream (Content-Type \"text/html\")"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			var conns atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				conns.Add(1)
				if tc.status == http.StatusOK {
					w.Header().Set("Content-Type", "text/html")
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c := withHeaders(testConfig(taskURL(srv.URL)))
			rec := &recorder{}
			stop, done := startStream(t, c, rec)
			wantURL := srv.URL + "/v1/task/" + idC + "/events"
			if tc.permanent {
				var err error
				select {
				case err = <-done:
				case <-time.After(5 * time.Second):
					t.Fatal("stream kept going after a permanent status")
				}
				var se *StatusError
				if !errors.As(err, &se) || se.Status != tc.status || !strings.Contains(err.Error(), "GET "+wantURL+": "+tc.msg) {
					t.Errorf("err = %v", err)
				}
				noSecret(t, err)
				if n := conns.Load(); n != 1 {
					t.Errorf("%d requests, want 1 (no retry)", n)
				}
				_, states := rec.Snapshot()
				last := states[len(states)-1]
				if last.Phase != PhaseFailed || last.Err == nil || last.Err.Error() != err.Error() || hasPhase(states, PhaseReconnecting) || hasPhase(states, PhaseLive) {
					t.Errorf("states = %v", states)
				}
				return
			}
			waitFor(t, "three attempts", 5*time.Second, func() bool { return conns.Load() >= 3 })
			if err := stop(); !errors.Is(err, context.Canceled) {
				t.Errorf("stream returned %v", err)
			}
			_, states := rec.Snapshot()
			attempts := 0
			for _, s := range states {
				switch s.Phase {
				case PhaseReconnecting:
					attempts++
					if s.Attempt != attempts || s.RetryIn <= 0 || s.Err == nil || !strings.Contains(s.Err.Error(), tc.msg) {
						t.Errorf("reconnecting state %d = %+v", attempts, s)
					}
					noSecret(t, s.Err)
				case PhaseLive, PhaseFailed:
					t.Errorf("unexpected state %v", s)
				}
			}
			if attempts < 2 {
				t.Errorf("only %d reconnect states", attempts)
			}
		})
	}
}

func TestStreamServerComesBack(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// Pick a port, free it, and serve on it twice.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	var headersOK atomic.Int32
	serve := func(gen int) (*http.Server, error) {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Proxy-Auth") == secret {
				headersOK.Add(1)
			}
			sseHeaders(w)
			for i := 0; i < 2; i++ {
				writeEvent(w, "maria", fmt.Sprintf(`{"gen":%d,"i":%d}`, gen, i))
			}
			<-r.Context().Done()
		})}
		go s.Serve(l)
		return s, nil
	}
	s1, err := serve(1)
	if err != nil {
		t.Fatal(err)
	}
	c := withHeaders(testConfig(taskURL("http://" + addr)))
	rec := &recorder{}
	stop, _ := startStream(t, c, rec)
	waitFor(t, "first server's frames", 5*time.Second, func() bool { return len(rec.Data()) >= 2 })

	s1.Close() // the daemon goes away
	waitFor(t, "failed reconnects", 5*time.Second, func() bool {
		_, states := rec.Snapshot()
		last := states[len(states)-1]
		return last.Phase == PhaseReconnecting && last.Attempt >= 3
	})
	var s2 *http.Server
	waitFor(t, "the port to be free again", 5*time.Second, func() bool {
		s2, err = serve(2)
		return err == nil
	})
	defer s2.Close()
	waitFor(t, "second server's frames", 5*time.Second, func() bool { return len(rec.Data()) >= 4 })
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("stream returned %v", err)
	}
	s2.Close()

	got := strings.Join(rec.Data(), " ")
	if got != `{"gen":1,"i":0} {"gen":1,"i":1} {"gen":2,"i":0} {"gen":2,"i":1}` {
		t.Errorf("frames = %s", got)
	}
	if n := headersOK.Load(); n != 2 {
		t.Errorf("headers arrived on %d of 2 connections", n)
	}
	_, states := rec.Snapshot()
	sawRefused := false
	for _, s := range states {
		if s.Phase == PhaseReconnecting && s.Err != nil {
			noSecret(t, s.Err)
			if strings.Contains(s.Err.Error(), "is a test server running there?") && strings.Contains(s.Err.Error(), addr) {
				sawRefused = true
			}
		}
	}
	if !sawRefused {
		t.Errorf("no reconnect state explained the refused connection: %v", states)
	}
	if last := states[len(states)-1]; last.Phase != PhaseLive || last.Attempt != 0 {
		t.Errorf("last state = %+v, want live with the attempt count reset", last)
	}
}

// Cancelling must end the stream at once whatever it is doing: waiting in
// a long backoff, pausing after a clean close, or blocked on a silent
// connection.
func TestStreamCancelIsPrompt(t *testing.T) {
	cases := map[string]http.HandlerFunc{
		"in backoff": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) },
		"after clean close": func(w http.ResponseWriter, r *http.Request) {
			sseHeaders(w)
			writeEvent(w, "maria", "{}")
		},
		"silent connection": func(w http.ResponseWriter, r *http.Request) {
			sseHeaders(w)
			writeEvent(w, "maria", "{}")
			<-r.Context().Done()
		},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			srv := httptest.NewServer(h)
			defer srv.Close()
			c := testConfig(taskURL(srv.URL))
			c.Initial, c.Max, c.CleanCloseDelay = time.Hour, time.Hour, time.Hour
			rec := &recorder{}
			stop, _ := startStream(t, c, rec)
			waitFor(t, "the stream to settle", 5*time.Second, func() bool {
				_, states := rec.Snapshot()
				return len(states) >= 2
			})
			time.Sleep(20 * time.Millisecond)
			start := time.Now()
			if err := stop(); !errors.Is(err, context.Canceled) {
				t.Errorf("stream returned %v", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("cancel took %v", d)
			}
			// No callback after return.
			_, before := rec.Snapshot()
			time.Sleep(20 * time.Millisecond)
			if _, after := rec.Snapshot(); len(after) != len(before) {
				t.Errorf("state reported after the stream returned")
			}
		})
	}
}

// An already-cancelled context returns at once (nil callbacks are fine); a
// missing or unusable URL fails at once, naming the URL without its token.
func TestSubscribeCancelledContextAndBadURL(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Subscribe(ctx, testConfig("http://127.0.0.1:1/x"), nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Subscribe(cancelled) = %v", err)
	}
	if err := Subscribe(context.Background(), Config{}, nil, nil); err == nil {
		t.Error("Subscribe without a URL func succeeded")
	}
	for _, u := range []string{"ftp://h/x?token=" + secret, "/relative?token=" + secret, "http://h/%zz?token=" + secret} {
		rec := &recorder{}
		err := Subscribe(context.Background(), testConfig(u), rec.Frame, rec.State)
		if err == nil || !strings.Contains(err.Error(), "token=REDACTED") {
			t.Errorf("Subscribe(%q) = %v, want an error naming the redacted URL", u, err)
		}
		noSecret(t, err)
		_, states := rec.Snapshot()
		if len(states) != 1 || states[0].Phase != PhaseFailed {
			t.Errorf("states = %v, want one failed", states)
		}
	}
}

// Streams go through the transport of Config.Client (here one trusting a
// test TLS cert), and an untrusted cert is reported, not silently accepted.
func TestStreamTLS(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		writeEvent(w, "maria", `{"tls":true}`)
		<-r.Context().Done()
	}))
	defer srv.Close()
	defer srv.Client().CloseIdleConnections()

	c := testConfig(taskURL(srv.URL))
	c.Client = srv.Client()
	rec := &recorder{}
	stop, _ := startStream(t, c, rec)
	waitFor(t, "a frame over TLS", 5*time.Second, func() bool { return len(rec.Data()) == 1 })
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("stream returned %v", err)
	}

	c = testConfig(taskURL(srv.URL))
	rec = &recorder{}
	stop, _ = startStream(t, c, rec)
	waitFor(t, "a reconnect state", 5*time.Second, func() bool {
		_, states := rec.Snapshot()
		return hasPhase(states, PhaseReconnecting)
	})
	stop()
	frames, states := rec.Snapshot()
	if len(frames) != 0 {
		t.Errorf("frames delivered over an untrusted connection: %v", frames)
	}
	for _, s := range states {
		if s.Phase == PhaseReconnecting && !strings.Contains(s.Err.Error(), "certificate") {
			t.Errorf("reconnect error doesn't mention the certificate: %v", s.Err)
		}
	}
}
