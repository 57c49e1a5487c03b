package memlimit

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

// The limit follows the bytes read, is never below the live heap plus the
// floor, moves only every Step, and Relax puts the process's back.
func TestBoundFollowsTheStream(t *testing.T) {
	orig, origGC := debug.SetMemoryLimit(-1), gcPercent()
	defer func() { debug.SetMemoryLimit(orig); debug.SetGCPercent(origGC) }()
	var n atomic.Int64
	b := Start(n.Load, math.MaxInt64)
	floor := Current()
	if floor >= math.MaxInt64 || floor < Floor {
		t.Fatalf("limit at start %d: want the live heap plus %d", floor, Floor)
	}
	n.Store(floor + 100<<20)
	b.Update()
	if got, want := Current(), n.Load()+Slack; got != want {
		t.Fatalf("limit after %d bytes = %d, want %d", n.Load(), got, want)
	}
	n.Add(Step / 2)
	b.Update()
	if got, want := Current(), n.Load()-Step/2+Slack; got != want {
		t.Fatalf("limit moved within a step: %d, want %d", got, want)
	}
	b.Relax()
	if got := Current(); got != math.MaxInt64 {
		t.Fatalf("after Relax the limit is %d, want none", got)
	}
	b.Update() // applies again
	if got, want := Current(), n.Load()+Slack; got != want {
		t.Fatalf("limit after Relax and Update = %d, want %d", got, want)
	}
	b.Relax()
}

// A process limit lower than the bound's is kept.
func TestBoundKeepsALowerLimit(t *testing.T) {
	orig, origGC := debug.SetMemoryLimit(-1), gcPercent()
	defer func() { debug.SetMemoryLimit(orig); debug.SetGCPercent(origGC) }()
	var n atomic.Int64
	n.Store(1 << 40)
	b := Start(n.Load, 50<<20)
	if got := Current(); got != 50<<20 {
		t.Fatalf("limit %d, want the process's 50 MiB", got)
	}
	b.Relax()
	if got := Current(); got != 50<<20 {
		t.Fatalf("after Relax %d, want 50 MiB", got)
	}
}

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// Relax leaves the collector a room in proportion to the live heap, and
// the next Update (the stream goes on) gives the process's own back.
func TestRelaxKeepsTheRoomInProportion(t *testing.T) {
	t.Setenv("GOGC", "")
	origLimit, origGC := debug.SetMemoryLimit(-1), gcPercent()
	defer func() { debug.SetMemoryLimit(origLimit); debug.SetGCPercent(origGC) }()
	debug.SetGCPercent(100)
	// A live heap of 64 MiB: a tenth of it is more than Room.
	keep := make([]byte, 64<<20)
	runtime.GC()
	var n atomic.Int64
	b := Start(n.Load, math.MaxInt64)
	b.Relax()
	if got := gcPercent(); got != MinPercent {
		t.Errorf("GC percent after Relax with 64 MiB live = %d, want %d", got, MinPercent)
	}
	if got := Current(); got != math.MaxInt64 {
		t.Errorf("after Relax the limit is %d, want none", got)
	}
	n.Store(1 << 20)
	b.Update()
	if got := gcPercent(); got != 100 {
		t.Errorf("GC percent while the stream goes on = %d, want the process's 100", got)
	}
	b.Relax()
	runtime.KeepAlive(keep)
}

// A GOGC chosen by whoever runs the process is never changed.
func TestRelaxLeavesAChosenGOGC(t *testing.T) {
	t.Setenv("GOGC", "300")
	origLimit, origGC := debug.SetMemoryLimit(-1), gcPercent()
	defer func() { debug.SetMemoryLimit(origLimit); debug.SetGCPercent(origGC) }()
	debug.SetGCPercent(300)
	var n atomic.Int64
	b := Start(n.Load, math.MaxInt64)
	b.Relax()
	if got := gcPercent(); got != 300 {
		t.Errorf("GC percent after Relax = %d, want GOGC's 300", got)
	}
}

func TestKeepPercent(t *testing.T) {
	for _, c := range []struct {
		live      int64
		own, want int
	}{
		{0, 100, MinPercent},         // nothing measured yet
		{2 << 20, 100, 100},          // small: Room is twice the heap, capped at the process's own
		{8 << 20, 100, 50},           // Room is half of it
		{20 << 20, 100, 20},          // a fifth
		{40 << 20, 100, MinPercent},  // a tenth
		{400 << 20, 100, MinPercent}, // big: never below MinPercent
		{8 << 20, 40, 40},            // never above the process's own
	} {
		if got := keepPercent(c.live, c.own); got != c.want {
			t.Errorf("keepPercent(%d MiB, %d) = %d, want %d", c.live>>20, c.own, got, c.want)
		}
	}
	if g := processGC(func(string) string { return "" }); !g.own || g.percent != 100 {
		t.Errorf("no GOGC: %+v, want Go's default 100, owned", g)
	}
	if g := processGC(func(k string) string { return map[string]string{"GOGC": "off"}[k] }); g.own {
		t.Errorf("GOGC=off: %+v, want it left alone", g)
	}
}

// After Hold, Relax keeps a limit at the memory the replay reached
// instead of lifting it, the limit follows a live heap that grows (the
// collector never runs without end), and the next Update ends the hold.
func TestHoldKeepsTheReplaysMemoryAndFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	origLimit, origGC := debug.SetMemoryLimit(-1), gcPercent()
	defer func() { debug.SetMemoryLimit(origLimit); debug.SetGCPercent(origGC) }()
	debug.SetGCPercent(100)
	var n atomic.Int64
	b := Start(n.Load, math.MaxInt64)
	b.Hold()
	b.Relax()
	held := b.Held()
	if held == 0 || held == math.MaxInt64 {
		t.Fatalf("held limit after Relax = %d, want the memory reached", held)
	}
	if got := Current(); got != held {
		t.Fatalf("limit after Relax = %d, want the held %d", got, held)
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if min := b.base + int64(value(s[0])) + Room; held < min-Step {
		t.Errorf("held %d: less than Room above the live heap (%d)", held, min)
	}

	// More than the held limit stays live: after a collection the limit
	// makes room above it again (it would run without end otherwise).
	size := held + 16<<20
	keep := make([]byte, size)
	for i := range keep {
		keep[i] = byte(i)
	}
	want := b.base + size + Room
	deadline := time.Now().Add(20 * time.Second)
	for Current() < want {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d after %d more bytes stayed live, want at least %d", Current(), size, want)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if h := b.Held(); h < want {
		t.Errorf("Held() = %d, want at least %d", h, want)
	}

	// The stream goes on: its own limit again, no hold.
	n.Store(2 * Step)
	b.Update()
	if b.Held() != 0 {
		t.Errorf("Held() after Update = %d, want 0", b.Held())
	}
	runtime.KeepAlive(keep)
	b.Relax()
}

// The held limit never rises above the process's own.
func TestHoldNeverAboveTheProcesssLimit(t *testing.T) {
	origLimit := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(origLimit)
	const own = 1 << 20 // below anything the process uses
	var n atomic.Int64
	b := Start(n.Load, own)
	b.Hold()
	b.Relax()
	if got := Current(); got != own {
		t.Errorf("limit after Relax = %d, want the process's own %d", got, own)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	b.Relax() // a second Relax changes nothing
	if got := Current(); got != math.MaxInt64 {
		t.Errorf("a second Relax set the limit to %d", got)
	}
}

// Stop ends a hold: the process's own limit is back and the collector's
// callbacks end.
func TestStopEndsTheHold(t *testing.T) {
	origLimit, origGC := debug.SetMemoryLimit(-1), gcPercent()
	defer func() { debug.SetMemoryLimit(origLimit); debug.SetGCPercent(origGC) }()
	var n atomic.Int64
	b := Start(n.Load, math.MaxInt64)
	b.Hold()
	b.Relax()
	if b.Held() == 0 {
		t.Fatal("no hold after Relax")
	}
	b.Stop()
	if got := Current(); got != math.MaxInt64 || b.Held() != 0 {
		t.Fatalf("after Stop: limit %d, held %d; want none", got, b.Held())
	}
	runtime.GC()
	runtime.GC()
	if got := Current(); got != math.MaxInt64 {
		t.Errorf("a collection after Stop set the limit to %d", got)
	}
	// Stop during a burst puts the process's limit back as Relax does.
	b = Start(n.Load, math.MaxInt64)
	b.Hold()
	b.Stop()
	if got := Current(); got != math.MaxInt64 || b.Held() != 0 {
		t.Errorf("Stop during a burst: limit %d, held %d; want none", got, b.Held())
	}
}
