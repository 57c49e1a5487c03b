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
	"testing"
	"time"

	"go.uber.org/goleak"

	r3 "github.com/r3labs/sse/v2"
)

// TestSmallEventsPassAsOneRun: the small events of one read pass r3labs as
// one stub event, whose run holds them all, in order and intact; a large
// event among them ends the run before it and passes alone.
func TestSmallEventsPassAsOneRun(t *testing.T) {
	big := strings.Repeat("x", sideAbove)
	var in strings.Builder
	var want []string
	for i := range 500 {
		fmt.Fprintf(&in, "data: word %d\n\n", i)
		want = append(want, fmt.Sprintf("word %d", i))
	}
	in.WriteString(": a comment alone is no event\n\n")
	fmt.Fprintf(&in, "data: %s\n\n", big)
	want = append(want, big)
	in.WriteString("id: 9\r\ndata: a\r\ndata: b\r\n\r\n")
	want = append(want, "a\nb")
	side := newStreamSide(nil)
	r := newEventReader(io.NopCloser(strings.NewReader(in.String())), 4<<20, side)
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	// What r3labs reads: one stub per run, and the large event's own.
	stubs := strings.Split(strings.TrimSuffix(string(out), "\n\n"), "\n\n")
	if len(stubs) != 3 {
		t.Fatalf("%d stub events, want 3 (a run, the large event, a run):\n%s", len(stubs), out)
	}
	if !strings.HasPrefix(stubs[2], "id: 9\n") {
		t.Errorf("the last run's stub does not carry its id (r3labs' Last-Event-ID): %q", stubs[2])
	}
	var got []string
	for _, s := range stubs {
		e := &r3.Event{}
		for _, line := range strings.Split(s, "\n") {
			k, v, _ := strings.Cut(line, ": ")
			switch k {
			case "event":
				e.Event = []byte(v)
			case "data":
				e.Data = []byte(v)
			}
		}
		fs, ok := side.take(e)
		if !ok {
			t.Fatalf("stub %q names no run", s)
		}
		for _, f := range fs {
			got = append(got, string(f.Data))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("frame %d: %.40q, want %.40q", i, got[i], want[i])
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
