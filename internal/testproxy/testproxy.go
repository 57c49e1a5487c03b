// Package testproxy has HTTP proxies for tests that need a server's
// streams cut or its requests watched, on loopback.
package testproxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// Cut forwards to target and cuts the k-th event stream after k×every
// events, in the middle of the next event, so a client must reconnect many
// times (a server that replays from the start each time gets further each
// time). Other responses are forwarded whole. watch, if not nil, sees
// every request first.
func Cut(t testing.TB, target string, every int, watch func(*http.Request)) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if watch != nil {
			watch(r)
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, "http://"+u.Host+r.URL.RequestURI(), r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		if every <= 0 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			copyFlushing(w, resp.Body)
			return
		}
		// Forward k×every events, then half of the next one, then abort.
		limit := every * int(conns.Add(1))
		buf := make([]byte, 0, 1<<16)
		tmp := make([]byte, 32<<10)
		sent := 0
		for {
			n, err := resp.Body.Read(tmp)
			buf = append(buf, tmp[:n]...)
			for {
				i := bytes.Index(buf, []byte("\n\n"))
				if i < 0 {
					break
				}
				if sent == limit {
					w.Write(buf[:i/2])
					w.(http.Flusher).Flush()
					panic(http.ErrAbortHandler)
				}
				w.Write(buf[:i+2])
				w.(http.Flusher).Flush()
				buf = buf[i+2:]
				sent++
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Forward forwards every request to target unchanged, flushing as the
// answer comes (streams stay live); watch, if not nil, sees each request.
func Forward(t testing.TB, target string, watch func(*http.Request)) *httptest.Server {
	return Cut(t, target, 0, watch)
}

func copyFlushing(w http.ResponseWriter, body io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		w.Write(buf[:n])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if err != nil {
			return
		}
	}
}
