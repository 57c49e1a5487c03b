package sse

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/perch-tui/perch/events"
)

// TestStreamSidelinedEvents: events large enough to pass around r3labs
// arrive exactly as r3labs would have delivered them, whatever their shape,
// in order with the small ones; a server's own event that borrows the stub
// name is an ordinary frame.
func TestStreamSidelinedEvents(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	big := strings.Repeat("0123456789", sideAbove/10+1)
	type frame struct{ name, data string }
	cases := []struct {
		raw  string
		want *frame // nil: r3labs delivers nothing
	}{
		{"event: maria\ndata: " + big + "\n\n", &frame{"maria", big}},
		{"event: maria\r\ndata: " + big + "\r\ndata:x\r\n\r\n", &frame{"maria", big + "\nx"}},
		{"id: 7\n: comment\nevent: a\ndata:" + big + "\ndata\nretry: 5\n\n", &frame{"a", big + "\n"}},
		{"data: " + big + "\r\r", &frame{"", big}},
		{": " + big + "\n\n", nil},
		{"event: " + sideEvent + "\ndata: spoof-1" + big + "\n\n", &frame{sideEvent, "spoof-1" + big}},
		{"event: " + sideEvent + "\ndata: spoof-2\n\n", &frame{sideEvent, "spoof-2"}},
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

// TestStreamLargeEventCopiedOnce: a 40 MiB event costs about one buffer on
// its way to the caller. Through r3labs it cost five or more: the reader's
// buffer and r3labs' scanner buffer, both grown by doubling, then the
// event's data.
func TestStreamLargeEventCopiedOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const size = 40 << 20
	body := strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", size/36)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		io.WriteString(w, "event: maria\ndata: ")
		for rest := body; len(rest) > 0; {
			k := min(len(rest), 1<<20)
			io.WriteString(w, rest[:k])
			rest = rest[k:]
		}
		io.WriteString(w, "\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := testConfig(taskURL(srv.URL))
	got := make(chan []byte, 1)
	ctx, cancel := context.WithCancel(context.Background())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done := make(chan error, 1)
	go func() {
		done <- Subscribe(ctx, c, func(f events.Frame) { got <- f.Data }, nil)
	}()
	var data []byte
	select {
	case data = <-got:
	case <-time.After(60 * time.Second):
		t.Fatal("no frame")
	}
	runtime.ReadMemStats(&after)
	cancel()
	<-done
	if !bytes.Equal(data, []byte(body)) {
		t.Fatalf("data differs: %d bytes", len(data))
	}
	// The reader reserves room for the largest event (64 MiB) once a
	// large one starts; room never written costs no memory, but counts
	// here. The server's side allocates little.
	t.Logf("allocated %d MiB", (after.TotalAlloc-before.TotalAlloc)>>20)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 100<<20 {
		t.Errorf("a %d MiB event allocated %d MiB on its way", size>>20, alloc>>20)
	}
}

// TestProgress: while an event is partly received, or bytes came in
// lately, the stream is busy, though no frame shows.
func TestProgress(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		writeEvent(w, "maria", "one")
		io.WriteString(w, "event: maria\ndata: tw")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "o\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := testConfig(taskURL(srv.URL))
	rec := &recorder{}
	p := &Progress{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	c.Progress = p
	go func() { done <- Subscribe(ctx, c, rec.Frame, rec.State) }()
	waitFor(t, "the first frame", 10*time.Second, func() bool { return len(rec.Data()) == 1 })
	time.Sleep(100 * time.Millisecond)
	if !p.Busy(10 * time.Millisecond) {
		t.Error("half an event received, but not busy")
	}
	close(release)
	waitFor(t, "the second frame", 10*time.Second, func() bool { return len(rec.Data()) == 2 })
	if !p.Busy(time.Minute) {
		t.Error("bytes just came in, but not busy")
	}
	time.Sleep(100 * time.Millisecond)
	if p.Busy(50 * time.Millisecond) {
		t.Error("quiet, but busy")
	}
	cancel()
	<-done
}

// TestProgressInFlight: events read whole but not yet handed to onFrame
// keep a stream from being settled, however long ago their bytes came;
// once every one is delivered (and a comment-only event, which r3labs
// would not deliver, counts for nothing), it settles.
func TestProgressInFlight(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		writeEvent(w, "maria", "one")
		io.WriteString(w, ": just a comment\n\n")
		writeEvent(w, "maria", "two")
		writeEvent(w, "maria", "three")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := testConfig(taskURL(srv.URL))
	p := &Progress{}
	c.Progress = p
	hold := make(chan struct{})
	got := make(chan string, 8)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Subscribe(ctx, c, func(f events.Frame) {
			got <- string(f.Data)
			if string(f.Data) == "one" {
				select { // the caller is slow with the first frame
				case <-hold:
				case <-ctx.Done():
				}
			}
		}, nil)
	}()
	defer func() { cancel(); <-done }() // before the server closes
	if d := <-got; d != "one" {
		t.Fatalf("first frame %q", d)
	}
	time.Sleep(150 * time.Millisecond)
	if p.Settled(20 * time.Millisecond) {
		t.Error("two events read and not delivered, but settled")
	}
	close(hold)
	for _, want := range []string{"two", "three"} {
		if d := <-got; d != want {
			t.Fatalf("frame %q, want %q", d, want)
		}
	}
	waitFor(t, "settled", 10*time.Second, func() bool { return p.Settled(20 * time.Millisecond) })
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
