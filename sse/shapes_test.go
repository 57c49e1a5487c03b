package sse

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// TestStreamEventShapes: events of every shape, large and small, arrive
// exactly as the spec reads them, in order; a comment alone is no event.
func TestStreamEventShapes(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	big := strings.Repeat("0123456789", 300<<10/10)
	type frame struct{ name, data string }
	cases := []struct {
		raw  string
		want *frame // nil: nothing to deliver
	}{
		{"event: maria\ndata: " + big + "\n\n", &frame{"maria", big}},
		{"event: maria\r\ndata: " + big + "\r\ndata:x\r\n\r\n", &frame{"maria", big + "\nx"}},
		{"id: 7\n: comment\nevent: a\ndata:" + big + "\ndata\nretry: 5\n\n", &frame{"a", big + "\n"}},
		{"data: " + big + "\r\r", &frame{"", big}},
		{": " + big + "\n\n", nil},
		{"event: perch.sidelined\ndata: spoof-1" + big + "\n\n", &frame{"perch.sidelined", "spoof-1" + big}},
		{"event: named-only\n\n", &frame{"named-only", ""}},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		for i, c := range cases {
			writeEvent(w, "small", string(rune('a'+i)))
			io.WriteString(w, c.raw)
			w.(http.Flusher).Flush()
		}
		writeEvent(w, "small", "end")
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := testConfig(taskURL(srv.URL))
	rec := &recorder{}
	stop, _ := startStream(t, c, rec)
	waitFor(t, "the last frame", 30*time.Second, func() bool {
		ds := rec.Data()
		return len(ds) > 0 && ds[len(ds)-1] == "end"
	})
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("stream returned %v", err)
	}
	frames, _ := rec.Snapshot()
	var want []frame
	for i, c := range cases {
		want = append(want, frame{"small", string(rune('a' + i))})
		if c.want != nil {
			want = append(want, *c.want)
		}
	}
	want = append(want, frame{"small", "end"})
	if len(frames) != len(want) {
		t.Fatalf("%d frames, want %d", len(frames), len(want))
	}
	for i, f := range frames {
		if f.Name != want[i].name || string(f.Data) != want[i].data {
			t.Errorf("frame %d: %q %.40q…, want %q %.40q…", i, f.Name, f.Data, want[i].name, want[i].data)
		}
	}
}

// TestStreamTruncatedTails: whatever line ends a server uses, an event cut
// by the end of the connection is never delivered, and the complete ones
// before it are.
func TestStreamTruncatedTails(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cases := []struct{ body, want string }{
		{"data: a\n\ndata: b\n", "a"},
		{"data: a\r\n\r\ndata: b\r\n", "a"},
		{"data: a\r\rdata: b\r", "a"},
		{"data: a\n\nevent: x\ndata: {\"half\":", "a"},
		{"data: a\n\ndata: b\n\n", "a b"},
		{"data: a\n\n: a comment, cut", "a"},
	}
	for _, tc := range cases {
		var conns atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sseHeaders(w)
			if conns.Add(1) == 1 {
				io.WriteString(w, tc.body)
				return
			}
			writeEvent(w, "", "end")
			<-r.Context().Done()
		}))
		rec := &recorder{}
		stop, _ := startStream(t, testConfig(srv.URL), rec)
		waitFor(t, "the second connection", 10*time.Second, func() bool {
			ds := rec.Data()
			return len(ds) > 0 && ds[len(ds)-1] == "end"
		})
		stop()
		srv.Close()
		if got := strings.Join(rec.Data(), " "); got != tc.want+" end" {
			t.Errorf("%q: frames %q, want %q", tc.body, got, tc.want+" end")
		}
	}
}

// TestFramesKeepTheirData: a frame's data stays as it was delivered while
// the stream reads on (small events' data lies in read buffers that are
// lent to them, never written again), whatever the events' sizes.
func TestFramesKeepTheirData(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const n = 3000
	data := func(i int) string {
		return strings.Repeat(string(rune('a'+i%26)), 50+(i*7919)%12000) + "#" + strings.Repeat("z", i%3)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		for i := range n {
			writeEvent(w, "maria", data(i))
			if i%50 == 0 {
				w.(http.Flusher).Flush()
			}
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := testConfig(taskURL(srv.URL))
	var frames [][]byte
	got := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Subscribe(ctx, c, func(f events.Frame) {
			frames = append(frames, f.Data)
			if len(frames) == n {
				close(got)
			}
		}, nil)
	}()
	defer func() { cancel(); <-done }()
	select {
	case <-got:
	case <-time.After(30 * time.Second):
		t.Fatalf("%d frames of %d", len(frames), n)
	}
	for i, d := range frames {
		if string(d) != data(i) {
			t.Fatalf("frame %d changed: %.40q… (%d bytes), want %d bytes", i, d, len(d), len(data(i)))
		}
	}
}

// TestRunsResumeWithTheLastID: a connection cut after a burst of small
// events (some with ids) resumes with the id of the last of them, as
// r3labs would have with each event on its own.
func TestRunsResumeWithTheLastID(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var mu sync.Mutex
	var lastIDs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		n := len(lastIDs)
		mu.Unlock()
		sseHeaders(w)
		if n == 1 {
			var b strings.Builder
			for i := range 300 {
				if i%7 == 0 {
					fmt.Fprintf(&b, "id: %d\n", i)
				}
				fmt.Fprintf(&b, "data: %d\n\n", i)
			}
			io.WriteString(w, b.String())
			return // cut
		}
		writeEvent(w, "", "end")
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := testConfig(taskURL(srv.URL))
	rec := &recorder{}
	stop, _ := startStream(t, c, rec)
	waitFor(t, "the frame after the reconnect", 30*time.Second, func() bool {
		ds := rec.Data()
		return len(ds) > 0 && ds[len(ds)-1] == "end"
	})
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("stream returned %v", err)
	}
	ds := rec.Data()
	if len(ds) != 301 {
		t.Fatalf("%d frames, want 301", len(ds))
	}
	for i := range 300 {
		if ds[i] != fmt.Sprint(i) {
			t.Fatalf("frame %d is %q", i, ds[i])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lastIDs) < 2 || lastIDs[1] != "294" {
		t.Fatalf("Last-Event-ID per connection %q, want the second to be 294", lastIDs)
	}
}
