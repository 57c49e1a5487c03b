package sse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/perch-tui/perch/events"
)

// TestURLPerAttempt: Config.URL is asked again before every reconnect, so
// the second connection carries the resume parameter the first lacked,
// whether the first ended cleanly or broke.
func TestURLPerAttempt(t *testing.T) {
	for _, mode := range []string{"clean close", "abort"} {
		t.Run(mode, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			var mu sync.Mutex
			var queries []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				queries = append(queries, r.URL.RawQuery)
				n := len(queries)
				mu.Unlock()
				sseHeaders(w)
				fmt.Fprintf(w, "id: %d\nevent: e\ndata: conn %d\n\n", n*10, n)
				w.(http.Flusher).Flush()
				if n == 1 {
					if mode == "abort" {
						panic(http.ErrAbortHandler)
					}
					return
				}
				<-r.Context().Done()
			}))
			defer srv.Close()

			var lastID atomic.Value // written by onFrame, read by URL: same goroutine, but the race detector can't know
			lastID.Store("")
			c := testConfig("")
			c.URL = func() string {
				u := srv.URL + "/stream"
				if id := lastID.Load().(string); id != "" {
					u += "?last_id=" + id
				}
				return u
			}
			rec := &recorder{}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- Subscribe(ctx, c, func(f events.Frame) {
					rec.Frame(f)
					// The id of the frame, as a caller would parse it from the data.
					lastID.Store(strings.TrimPrefix(string(f.Data), "conn ") + "0")
				}, rec.State)
			}()
			waitFor(t, "the second connection's frame", 5*time.Second, func() bool { return len(rec.Data()) >= 2 })
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Subscribe returned %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(queries) < 2 || queries[0] != "" || queries[1] != "last_id=10" {
				t.Errorf("queries = %q, want the first bare and the second with last_id=10", queries)
			}
		})
	}
}

// TestHeaderPerAttemptToHostOnly: the headers go with every attempt to the
// URL's host, and never to a redirect's target on another host.
func TestHeaderPerAttemptToHostOnly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var leaked, targetHits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		targetHits.Add(1)
		if r.Header.Get("X-Proxy-Auth") != "" {
			leaked.Add(1)
		}
		sseHeaders(w)
		writeEvent(w, "e", "from target")
		// A clean close: the next attempt starts at the first server again.
	}))
	defer target.Close()
	var withHeader, origin atomic.Int32
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin.Add(1)
		if r.Header.Get("X-Proxy-Auth") == secret {
			withHeader.Add(1)
		}
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer first.Close()

	c := withHeaders(testConfig(first.URL + "/stream"))
	rec := &recorder{}
	stop, _ := startStream(t, c, rec)
	waitFor(t, "three connections", 5*time.Second, func() bool { return len(rec.Data()) >= 3 })
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("Subscribe returned %v", err)
	}
	if o, h := origin.Load(), withHeader.Load(); o < 3 || h != o {
		t.Errorf("the header reached the URL's host on %d of %d attempts", h, o)
	}
	if n := leaked.Load(); n != 0 || targetHits.Load() < 3 {
		t.Errorf("the header reached the redirect target %d times (of %d)", n, targetHits.Load())
	}
}

// TestOnConnect: called once per 200 event-stream connection, after its
// live state and before its first frame, never for a refused attempt.
func TestOnConnect(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var conns atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := conns.Add(1)
		if n == 2 {
			w.WriteHeader(http.StatusServiceUnavailable) // retried, not a connect
			return
		}
		sseHeaders(w)
		writeEvent(w, "e", fmt.Sprint(n))
		if n >= 4 {
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	var mu sync.Mutex
	var log []string
	add := func(s string) { mu.Lock(); log = append(log, s); mu.Unlock() }
	c := testConfig(srv.URL)
	c.OnConnect = func() { add("connect") }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Subscribe(ctx, c, func(f events.Frame) { add("frame " + string(f.Data)) }, func(s ConnState) {
			if s.Phase == PhaseLive {
				add("live")
			}
		})
	}()
	waitFor(t, "the fourth connection's frame", 5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(log) > 0 && log[len(log)-1] == "frame 4"
	})
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	want := "live connect frame 1 live connect frame 3 live connect frame 4"
	if got := strings.Join(log, " "); got != want {
		t.Errorf("log = %s\nwant  %s", got, want)
	}
}

// TestTokenRedacted: a token in the URL's query never shows in an error or
// a state, whether the server refuses it (401, its body echoing the token),
// is not an event stream, or is not there at all; the URL is still named,
// with token=REDACTED.
func TestTokenRedacted(t *testing.T) {
	const token = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.sig+/="
	q := "?last_id=5&token=" + strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(token, "+", "%2B"), "/", "%2F"), "=", "%3D")
	leaks := func(t *testing.T, s string) {
		t.Helper()
		for _, form := range []string{token, strings.Split(token, ".")[1], "%2F%3D"} {
			if strings.Contains(s, form) {
				t.Errorf("the token shows: %s", s)
			}
		}
	}
	t.Run("401", func(t *testing.T) {
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("token") != token {
				t.Errorf("the server got token %q", r.URL.Query().Get("token"))
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"detail":"Invalid token `+token+`"}`)
		}))
		defer srv.Close()
		rec := &recorder{}
		err := Subscribe(context.Background(), testConfig(srv.URL+"/agent-run/r1/stream"+q), rec.Frame, rec.State)
		var se *StatusError
		if !errors.As(err, &se) || se.Status != http.StatusUnauthorized {
			t.Fatalf("err = %v, want a 401 StatusError", err)
		}
		want := "GET " + srv.URL + "/agent-run/r1/stream?last_id=5&token=REDACTED: 401 Unauthorized: Invalid token REDACTED"
		if err.Error() != want {
			t.Errorf("err = %s\nwant  %s", err, want)
		}
		leaks(t, err.Error())
		leaks(t, string(se.Body))
		_, states := rec.Snapshot()
		for _, s := range states {
			leaks(t, s.String())
		}
	})
	t.Run("not an event stream", func(t *testing.T) {
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>"+token+"</html>")
		}))
		defer srv.Close()
		c := testConfig(srv.URL + "/s" + q)
		c.Server = "a Suna API"
		err := Subscribe(context.Background(), c, nil, nil)
		if err == nil || !strings.Contains(err.Error(), "token=REDACTED") || !strings.Contains(err.Error(), "is this a Suna API?") {
			t.Errorf("err = %v", err)
		}
		leaks(t, fmt.Sprint(err))
	})
	t.Run("connection refused", func(t *testing.T) {
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		c := testConfig("http://" + addr + "/s" + q)
		c.Server = "a Suna API"
		rec := &recorder{}
		stop, _ := startStream(t, c, rec)
		waitFor(t, "failed reconnects", 5*time.Second, func() bool {
			_, states := rec.Snapshot()
			return len(states) >= 3
		})
		stop()
		_, states := rec.Snapshot()
		for _, s := range states {
			leaks(t, s.String())
			if s.Phase == PhaseReconnecting {
				msg := s.Err.Error()
				if !strings.Contains(msg, "http://"+addr+"/s?last_id=5&token=REDACTED") || !strings.Contains(msg, "is a Suna API running there?") {
					t.Errorf("reconnect error = %s", msg)
				}
			}
		}
	})
}

func TestRedact(t *testing.T) {
	cases := []struct{ in, out, secret string }{
		{"http://h/s", "http://h/s", ""},
		{"http://h/s?token=abc", "http://h/s?token=REDACTED", "abc"},
		{"http://h/s?a=1&token=abc&b=2#f", "http://h/s?a=1&token=REDACTED&b=2#f", "abc"},
		{"http://h/s?tok%65n=abc", "http://h/s?tok%65n=REDACTED", "abc"},
		{"http://h/s?token=", "http://h/s?token=REDACTED", ""},
		{"http://h/s?tokens=abc", "http://h/s?tokens=abc", ""},
		{"http://u:pw@h/s?token=a%2Fb", "http://u:xxxxx@h/s?token=REDACTED", "a/b"},
	}
	for _, c := range cases {
		r := redact(c.in)
		if r.url != c.out {
			t.Errorf("redact(%q) = %q, want %q", c.in, r.url, c.out)
		}
		if c.secret != "" {
			if got := r.scrubString("x " + c.in + " " + c.secret); strings.Contains(got, c.secret) {
				t.Errorf("scrub left the secret of %q: %q", c.in, got)
			}
		}
	}
	r := redact("http://h/s?token=a%2Fb")
	if got := r.scrubString("x a/b y a%2Fb"); got != "x REDACTED y REDACTED" {
		t.Errorf("scrub = %q", got)
	}
}

func TestServerMessage(t *testing.T) {
	cases := []struct{ body, want string }{
		{``, ``},
		{`{"error":{"code":-1,"message":"Task not found"}}`, "Task not found"},
		{`{"error":"bad  thing"}`, "bad thing"},
		{`{"message":"nope"}`, "nope"},
		{`{"detail":"Thread not found"}`, "Thread not found"},
		{`{"detail":[{"msg":"field required"}]}`, `{"detail":[{"msg":"field required"}]}`},
		{`"plain json"`, "plain json"},
		{"line one\nline two", "line one line two"},
		{strings.Repeat("x", 400), strings.Repeat("x", 300) + "… (400 bytes)"},
	}
	for _, c := range cases {
		if got := serverMessage([]byte(c.body)); got != c.want {
			t.Errorf("serverMessage(%.40q) = %q, want %q", c.body, got, c.want)
		}
	}
}
