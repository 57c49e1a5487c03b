package sse

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
)

// benchStream is a Suna-like run: many small frames (a few words each),
// the way a long answer streams.
func benchStream(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "data: {\"type\":\"assistant\",\"content\":\"{\\\"content\\\": \\\"word %d and \\\"}\",\"message_id\":null}\n\n", i)
	}
	return b.String()
}

func benchServer(body string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		io.WriteString(w, body)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
}

const benchFrames = 20000

// BenchmarkSubscribeSmallFrames: 20,000 small frames through Subscribe,
// to the last one delivered.
func BenchmarkSubscribeSmallFrames(b *testing.B) {
	body := benchStream(benchFrames)
	srv := benchServer(body)
	defer srv.Close()
	b.SetBytes(int64(len(body)))
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		_ = Subscribe(ctx, testConfig(srv.URL), func(events.Frame) {
			if n++; n == benchFrames {
				cancel()
			}
		}, nil)
		cancel()
	}
}

// BenchmarkRawRead is the baseline, what curl does: read the same bytes
// off the same kind of connection, no parsing.
func BenchmarkRawRead(b *testing.B) {
	body := benchStream(benchFrames)
	srv := benchServer(body)
	defer srv.Close()
	b.SetBytes(int64(len(body)))
	buf := make([]byte, 64<<10)
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		for got := 0; got < len(body); {
			k, err := resp.Body.Read(buf)
			got += k
			if err != nil {
				b.Fatal(err)
			}
		}
		resp.Body.Close()
		cancel()
	}
}
