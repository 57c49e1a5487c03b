package maria

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perch-tui/perch/internal/ssetest"
	"github.com/perch-tui/perch/sse"
	"go.uber.org/goleak"
)

// The reconnecting subscription itself is tested in package sse; these
// tests cover what the client adds: endpoints, headers, transport, timing,
// and refusals as *APIError.

// fastTiming keeps reconnect tests quick without touching the defaults.
func fastTiming() Option {
	return withStreamTiming(streamTiming{initial: 10 * time.Millisecond, max: 40 * time.Millisecond, cleanDelay: 20 * time.Millisecond})
}

// The shared stream-test helpers, under this package's names.
type recorder = ssetest.Recorder[sse.ConnState]

var (
	waitFor    = ssetest.WaitFor
	sseHeaders = ssetest.Headers
	writeEvent = ssetest.WriteEvent
)

// TestStreamEndpointsAndHeaders: StreamTask and StreamDaemon follow their
// routes with the client's headers on every connection, and resubscribe
// after a clean close with the client's timing.
func TestStreamEndpointsAndHeaders(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var taskConns, daemonConns, bad atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Proxy-Auth") != secret {
			bad.Add(1)
		}
		switch r.URL.Path {
		case "/v1/task/" + idC + "/events":
			n := taskConns.Add(1)
			sseHeaders(w)
			writeEvent(w, "maria", fmt.Sprintf(`{"conn":%d}`, n))
			if n < 2 {
				return // a clean close
			}
		case "/v1/events":
			daemonConns.Add(1)
			sseHeaders(w)
			writeEvent(w, "daemon.tasks.synchronized", `{"tasks":[]}`)
		default:
			http.NotFound(w, r)
			return
		}
		<-r.Context().Done()
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL+"/v1", WithHeaders(testHeaders()), fastTiming())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	task, daemon := &recorder{}, &recorder{}
	done := make(chan error, 2)
	go func() { done <- c.StreamTask(ctx, idC, task.Frame, task.State) }()
	go func() { done <- c.StreamDaemon(ctx, daemon.Frame, daemon.State) }()
	waitFor(t, "both streams' frames", 5*time.Second, func() bool {
		tf, _ := task.Snapshot()
		df, _ := daemon.Snapshot()
		return len(tf) >= 2 && len(df) >= 1
	})
	cancel()
	for i := 0; i < 2; i++ {
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("stream returned %v", err)
		}
	}
	tf, ts := task.Snapshot()
	if string(tf[0].Data) != `{"conn":1}` || string(tf[1].Data) != `{"conn":2}` {
		t.Errorf("task frames = %+v", tf)
	}
	if df, _ := daemon.Snapshot(); df[0].Name != "daemon.tasks.synchronized" {
		t.Errorf("daemon frames = %+v", df)
	}
	if n := bad.Load(); n != 0 {
		t.Errorf("%d requests without the client's header", n)
	}
	sawClosed := false
	for _, s := range ts {
		if s.Phase == sse.PhaseReconnecting && errors.Is(s.Err, sse.ErrStreamClosed) && s.RetryIn == 20*time.Millisecond {
			sawClosed = true
		}
	}
	if !sawClosed {
		t.Errorf("no reconnect after the clean close with the client's delay: %v", ts)
	}
}

// TestStreamRefusalIsAPIError: a refused stream is an *APIError decoded
// from maria's error format, in the failed state and as the result, named
// the maria way.
func TestStreamRefusalIsAPIError(t *testing.T) {
	cases := []struct {
		status int
		ctype  string
		body   string
		code   int
		msg    string
	}{
		{http.StatusNotFound, "application/json", `{"error":{"code":-1,"message":"Task not found: ` + idC + `"}}`, -1, "Task not found: " + idC},
		{http.StatusBadRequest, "application/json", `"Invalid UUID: x"`, 0, "Invalid UUID: x"},
		{http.StatusNoContent, "", "", 0, "a maria daemon has no stream here"},
		{http.StatusOK, "text/html", "<html>sign in</html>", 0, `not an event stream (Content-Type "text/html"); is this a maria daemon? check --url or PERCH_URL`},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.ctype != "" {
					w.Header().Set("Content-Type", tc.ctype)
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c, _ := NewClient(srv.URL+"/v1", WithHeaders(testHeaders()), fastTiming())
			rec := &recorder{}
			err := c.StreamTask(context.Background(), idC, rec.Frame, rec.State)
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != tc.status || ae.Code != tc.code || ae.Message != tc.msg ||
				ae.Method != http.MethodGet || ae.URL != srv.URL+"/v1/task/"+idC+"/events" {
				t.Errorf("err = %#v", err)
			}
			noSecret(t, err)
			_, states := rec.Snapshot()
			last := states[len(states)-1]
			var sae *APIError
			if last.Phase != sse.PhaseFailed || !errors.As(last.Err, &sae) || last.Err.Error() != err.Error() {
				t.Errorf("last state = %+v", last)
			}
		})
	}
}

// TestStreamTaskActivity: the activity given follows the incoming bytes,
// half an event's included.
func TestStreamTaskActivity(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		writeEvent(w, "maria", "one")
		io.WriteString(w, "event: maria\ndata: tw")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	c, _ := NewClient(srv.URL+"/v1", fastTiming())
	a := &sse.Activity{}
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.StreamTaskActivity(ctx, idC, rec.Frame, rec.State, a) }()
	waitFor(t, "the first frame", 5*time.Second, func() bool { fs, _ := rec.Snapshot(); return len(fs) == 1 })
	waitFor(t, "half an event to show as busy", 5*time.Second, func() bool { return a.Busy(0) })
	cancel()
	<-done
}

// TestStreamTLS: streams go through the transport of WithHTTPClient (here
// one trusting a test TLS cert); without it the untrusted cert is reported.
func TestStreamTLS(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		writeEvent(w, "maria", `{"tls":true}`)
		<-r.Context().Done()
	}))
	defer srv.Close()
	defer srv.Client().CloseIdleConnections()
	for _, trusted := range []bool{true, false} {
		opts := []Option{fastTiming()}
		if trusted {
			opts = append(opts, WithHTTPClient(srv.Client()))
		}
		c, _ := NewClient(srv.URL+"/v1", opts...)
		rec := &recorder{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.StreamTask(ctx, idC, rec.Frame, rec.State) }()
		waitFor(t, "a frame or a reconnect", 5*time.Second, func() bool {
			fs, ss := rec.Snapshot()
			return len(fs) == 1 || len(ss) > 0 && ss[len(ss)-1].Phase == sse.PhaseReconnecting
		})
		cancel()
		<-done
		fs, ss := rec.Snapshot()
		if trusted && len(fs) != 1 {
			t.Errorf("no frame over trusted TLS: %v", ss)
		}
		if !trusted && (len(fs) != 0 || !strings.Contains(ss[len(ss)-1].Err.Error(), "certificate")) {
			t.Errorf("untrusted TLS: frames %v, states %v", fs, ss)
		}
	}
}
