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

// BenchmarkSubscribeLargeFrames: maria's several-MB frames (a tool's
// output), written whole or in pieces with a flush after each, as a
// server that streams its writes sends them: r3labs' scanner looks for
// the event's end from its start after every read it gets, so the reads'
// size decides whether a large event costs its size or its square.
func BenchmarkSubscribeLargeFrames(b *testing.B) {
	const frames, size = 4, 8 << 20
	payload := strings.Repeat("x", size)
	for _, piece := range []int{4 << 10, 64 << 10, size} {
		b.Run(fmt.Sprintf("piece=%dK", piece>>10), func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				sseHeaders(w)
				for range frames {
					io.WriteString(w, "event: maria\ndata: ")
					for rest := payload; len(rest) > 0; {
						k := min(len(rest), piece)
						io.WriteString(w, rest[:k])
						w.(http.Flusher).Flush()
						rest = rest[k:]
					}
					io.WriteString(w, "\n\n")
					w.(http.Flusher).Flush()
				}
				<-r.Context().Done()
			}))
			defer srv.Close()
			b.SetBytes(frames * size)
			for i := 0; i < b.N; i++ {
				ctx, cancel := context.WithCancel(context.Background())
				n := 0
				_ = Subscribe(ctx, testConfig(srv.URL), func(f events.Frame) {
					if len(f.Data) != size {
						b.Fatalf("frame of %d bytes", len(f.Data))
					}
					if n++; n == frames {
						cancel()
					}
				}, nil)
				cancel()
			}
		})
	}
}

// BenchmarkReadFramesAfterLargeEvent: a recording whose first event is a
// 16 MiB output, then small events (a streamed answer's few words, or
// maria's few-KB frames): the large event grows r3labs' buffer for good,
// and what was read past its end is searched again for every event in it.
func BenchmarkReadFramesAfterLargeEvent(b *testing.B) {
	for _, small := range []int{100, 5000} {
		b.Run(fmt.Sprintf("small=%dB", small), func(b *testing.B) {
			var body strings.Builder
			body.WriteString("data: " + strings.Repeat("x", 16<<20) + "\n\n")
			n := 0
			for body.Len() < 32<<20 {
				body.WriteString("data: " + strings.Repeat("y", small) + "\n\n")
				n++
			}
			in := body.String()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				got := 0
				if err := ReadFrames(strings.NewReader(in), func(events.Frame) error { got++; return nil }); err != nil || got != n+1 {
					b.Fatalf("%d frames, %v", got, err)
				}
			}
		})
	}
}
