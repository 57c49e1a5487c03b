package sse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/perch-tui/perch/events"
)

// run makes the parsed events of one run: n frames of size bytes, each
// filled with its own letter, the data of the odd ones not single (as if
// joined from several lines: not carved).
func run(n, size int, letter byte) ([]parsedEvent, int) {
	var ps []parsedEvent
	total := 0
	for i := range n {
		d := bytes.Repeat([]byte{letter + byte(i%20)}, size)
		single := i%2 == 0
		if single {
			total += size
		}
		ps = append(ps, parsedEvent{events.Frame{Name: "maria", Data: d}, single})
	}
	return ps, total
}

func sameMemory(a, b []byte) bool { return len(a) > 0 && len(b) > 0 && &a[:1][0] == &b[:1][0] }

// TestLenderCarves: frames come out with their data, each with a cap that
// ends at its end, whether lending is on or not; only single data is
// carved, and only lent data is taken back.
func TestLenderCarves(t *testing.T) {
	for _, on := range []bool{false, true} {
		var l lender
		if on {
			l.enable()
		}
		ps, total := run(6, 100, 'a')
		want := make([]string, len(ps))
		for i, p := range ps {
			want[i] = string(p.f.Data)
		}
		fs := l.carve(ps, total)
		for i, f := range fs {
			if string(f.Data) != want[i] || cap(f.Data) != len(f.Data) {
				t.Errorf("on=%v frame %d: %d bytes cap %d, want %q", on, i, len(f.Data), cap(f.Data), want[i][:1])
			}
			if carved := !sameMemory(f.Data, ps[i].f.Data); carved != ps[i].single {
				t.Errorf("on=%v frame %d: carved %v, single %v", on, i, carved, ps[i].single)
			}
		}
		if got, wantN := len(l.lent), map[bool]int{false: 0, true: 3}[on]; got != wantN {
			t.Errorf("on=%v: %d frames lent, want %d", on, got, wantN)
		}
		for _, f := range fs {
			l.recycle(f.Data)
			l.recycle(f.Data) // twice: the second is ignored
		}
		if len(l.lent) != 0 || (on && l.cur.refs != 0) {
			t.Errorf("on=%v: %d still lent after recycling all", on, len(l.lent))
		}
	}
}

// TestLenderReusesWhatCameBack: a slab comes back once every frame carved
// from it did, and later frames are carved from it; a slab with one frame
// still out is never carved again, so that frame's data stays as it was.
func TestLenderReusesWhatCameBack(t *testing.T) {
	var l lender
	l.enable()
	perSlab := slabSize / (4 << 10)
	ps, total := run(2*perSlab, 4<<10, 'a') // half single: one slab's worth
	first := l.carve(ps, total)
	kept := first[0] // never handed back
	keptWant := string(kept.Data)
	for _, f := range first[1:] {
		l.recycle(f.Data)
	}
	// A second slab, handed back whole.
	ps, total = run(2*perSlab, 4<<10, 'A')
	second := l.carve(ps, total)
	if sameSlab := l.lent[&second[0].Data[0]] == l.lent[&kept.Data[0]]; sameSlab {
		t.Fatal("a full slab was carved again")
	}
	for _, f := range second {
		l.recycle(f.Data)
	}
	// A third run needs a new slab: the second one comes back.
	ps, total = run(2*perSlab, 4<<10, 'k')
	third := l.carve(ps, total)
	if !sameMemory(third[0].Data, second[0].Data) {
		t.Error("the slab handed back was not reused")
	}
	for _, f := range third {
		l.recycle(f.Data)
	}
	if string(kept.Data) != keptWant {
		t.Error("the data of a frame still out was overwritten")
	}
	if n := len(l.free); n > freeSlabs {
		t.Errorf("%d free slabs kept, at most %d", n, freeSlabs)
	}
}

// TestLenderLargeRun: a run larger than a slab gets a slice of its own,
// lent to nobody.
func TestLenderLargeRun(t *testing.T) {
	var l lender
	l.enable()
	ps, total := run(3, slabSize, 'a')
	fs := l.carve(ps, total)
	if len(l.lent) != 0 || string(fs[2].Data) != string(ps[2].f.Data) {
		t.Errorf("%d lent, frame 2 intact: %v", len(l.lent), string(fs[2].Data) == string(ps[2].f.Data))
	}
}

// TestStreamLendsFrames: over a real connection, a caller that hands each
// frame back gets every frame intact, from a few slabs; a frame it keeps
// stays intact while thousands follow.
func TestStreamLendsFrames(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const n = 4000
	body := func(i int) string {
		return fmt.Sprintf("%05d:%s", i, strings.Repeat(string(rune('a'+i%26)), 200+i%900))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		for i := range n {
			writeEvent(w, "maria", body(i))
			if i%97 == 0 {
				w.(http.Flusher).Flush()
			}
		}
		writeEvent(w, "maria", "end")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	p := &Progress{}
	p.LendFrames()
	c := testConfig(taskURL(srv.URL))
	c.Progress = p
	var (
		mu    sync.Mutex
		got   int
		bad   []string
		kept  []byte
		slabs = map[*slab]bool{}
		end   = make(chan struct{})
	)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- Subscribe(ctx, c, func(f events.Frame) {
			mu.Lock()
			defer mu.Unlock()
			if string(f.Data) == "end" {
				close(end)
				return
			}
			if want := body(got); string(f.Data) != want {
				bad = append(bad, fmt.Sprintf("frame %d: %.12q…", got, f.Data))
			}
			p.lend.mu.Lock()
			if s := p.lend.lent[&f.Data[0]]; s != nil {
				slabs[s] = true
			}
			p.lend.mu.Unlock()
			if got == 10 {
				kept = f.Data
			} else {
				p.Recycle(f.Data)
			}
			got++
		}, nil)
	}()
	select {
	case <-end:
	case <-time.After(30 * time.Second):
		t.Fatal("no end frame within 30 s")
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Subscribe returned %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got != n || len(bad) > 0 {
		t.Fatalf("%d frames, want %d; wrong: %v", got, n, bad)
	}
	if string(kept) != body(10) {
		t.Error("a frame kept by the caller was overwritten")
	}
	// About 3.6 MB went through 512 KiB slabs; with reuse a handful do.
	if len(slabs) == 0 || len(slabs) > freeSlabs+3 {
		t.Errorf("frames were carved from %d slabs", len(slabs))
	}
}
