// Package memlimit keeps the Go memory of a process that accumulates a
// stream near what the stream has brought so far, with a soft memory limit
// (debug.SetMemoryLimit) that follows the bytes read.
//
// Why: a replay's raw frames are garbage once decoded, and together they
// are as large as the stream, while what is kept of them (the timeline) is
// about three quarters of it. With GOGC=100 alone the garbage may pile up
// to the size of everything kept, doubling the peak. The limit follows the
// stream (bytes so far plus Slack) and never comes below the memory used
// before the stream plus the live heap plus Floor, so a timeline larger
// than its stream only makes the collector run more often (every Floor of
// garbage), never without end.
//
// Once the stream has gone quiet (Relax), the limit is lifted and the
// collector's GC percent is lowered so that its room is about Room above
// the live heap (never less than a tenth of it), instead of Go's default
// of all of it: a process that stays up after the replay (the TUI) would
// otherwise grow to twice the timeline with the garbage of drawing it, and
// even a quarter of it grew the TUI above the replay's own peak while
// paging. A GOGC set in
// the environment is left alone.
//
// A process that stays up after the replay may also keep a limit at the
// memory the replay reached (Hold), so that drawing what came in does not
// grow it further.
//
// The limit and the GC percent are process-wide: only a program that owns
// its process (perch's export, perch's TUI) may use them.
package memlimit

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

const (
	Slack = 5 << 20 // room above the bytes read
	Floor = 8 << 20 // the least room for garbage above the live heap
	Step  = 1 << 20 // the limit moves every this many bytes

	// Room is the garbage Relax leaves room for above the live heap
	// (see keepPercent), and MinPercent the least GC percent it sets.
	// Drawing allocates little (paging 30 screens of the 10k session made
	// about 6 MB of garbage), so a collection every 4 MB costs a few
	// concurrent ones of 5–10 ms while paging, and keeps the heap under
	// the peak the replay already reached.
	Room       = 4 << 20
	MinPercent = 10
)

// Bound is one stream's limit. Its methods may be called from several
// goroutines.
type Bound struct {
	mu     sync.Mutex
	bytes  func() int64
	next   int64 // bytes read at the next update; 0: not applied
	before int64 // the limit to restore
	base   int64 // the Go memory in use before the stream, besides the heap's objects and free pages
	live   []metrics.Sample
	gc     gcSetting
	tight  bool // Relax set the GC percent (keepPercent)

	// hold: Relax keeps a limit at the memory the replay reached (Hold).
	// held is that limit while it applies, gen tells the collector's
	// callbacks of an earlier Relax from the current one.
	hold bool
	held int64
	gen  uint64
	mem  []metrics.Sample // total, released, live
}

// Start applies a limit that follows bytes (the stream's bytes read so
// far). before is the limit to come back to (Relax): the process's own,
// as debug.SetMemoryLimit(-1) reports it before any Bound was started.
func Start(bytes func() int64, before int64) *Bound {
	b := &Bound{bytes: bytes, before: before, gc: processGC(os.Getenv), live: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}}
	metrics.Read(b.live)
	// The heap's objects and free pages are left out: the live heap is
	// added at each update, and garbage and free pages are what the limit
	// makes room for (counting them again put the limit 3–4 MB higher for
	// nothing).
	b.base = max(int64(value(b.live[1])-value(b.live[2])-value(b.live[3])-value(b.live[4])), 0)
	b.live = b.live[:1]
	b.mem = []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}, {Name: "/gc/heap/live:bytes"}}
	b.Update()
	return b
}

// Hold makes Relax keep a soft limit at the Go memory the replay brought
// the process to, instead of lifting it: for a process that stays up
// after the replay (the TUI), whose drawing would otherwise add its
// garbage and the heap's new spans on top of the replay's peak (paging
// the 10k session grew the TUI 1–2.5 MB above it). The limit rises after
// each collection to keep Room above the live heap, so what stays
// (rendered lines, new items) never makes the collector run without end;
// it never comes below what the replay reached, and never above the
// process's own limit. The next Update gives the stream's limit back.
func (b *Bound) Hold() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hold = true
}

// Current is the process's soft memory limit now.
func Current() int64 { return debug.SetMemoryLimit(-1) }

func value(s metrics.Sample) uint64 {
	if s.Value.Kind() == metrics.KindUint64 {
		return s.Value.Uint64()
	}
	return 0
}

// Update raises the limit as the stream grows (cheap when it has not grown
// by Step since the last update), and applies it again after Relax.
func (b *Bound) Update() {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.bytes()
	if b.next != 0 && n < b.next {
		return
	}
	b.next = n + Step
	b.held = 0 // the stream's limit governs again
	if b.tight {
		// The stream's limit governs again: the collector's usual room
		// would only add collections while the replay's garbage is counted.
		debug.SetGCPercent(b.gc.percent)
		b.tight = false
	}
	metrics.Read(b.live)
	live := int64(value(b.live[0]))
	limit := max(n+Slack, b.base+live+Floor)
	debug.SetMemoryLimit(min(limit, b.before))
}

// Relax puts the previous limit back until the next Update (or, after
// Hold, a limit at the memory reached; see Hold), and leaves
// the collector a room in proportion to the live heap (see keepPercent):
// with Go's default, what the replay built could grow to twice its size
// with the garbage of drawing it (scrolling through the 10k session took
// the TUI from 70 to 89 MB).
func (b *Bound) Relax() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next != 0 {
		b.next = 0
		b.gen++
		b.held = 0
		limit := b.before
		if b.hold {
			metrics.Read(b.mem)
			b.held = max(int64(value(b.mem[0])-value(b.mem[1])), b.base+int64(value(b.mem[2]))+Room)
			limit = min(b.held, b.before)
			b.watch(b.gen)
		}
		debug.SetMemoryLimit(limit)
		if b.gc.own {
			metrics.Read(b.live)
			debug.SetGCPercent(keepPercent(int64(value(b.live[0])), b.gc.percent))
			b.tight = true
		}
	}
}

// watch calls afterGC once the collector has run a cycle: a finalizer on
// an object nothing refers to runs after the cycle that finds it
// unreachable.
func (b *Bound) watch(gen uint64) {
	s := &gcSentinel{b: b, gen: gen}
	runtime.SetFinalizer(s, func(s *gcSentinel) { s.b.afterGC(s.gen) })
}

type gcSentinel struct {
	b   *Bound
	gen uint64
}

// afterGC raises the held limit to keep Room above the live heap, and
// watches the next cycle, until an Update (the stream goes on) or another
// Relax ends this hold.
func (b *Bound) afterGC(gen uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next != 0 || b.gen != gen || b.held == 0 {
		return
	}
	metrics.Read(b.mem)
	if need := b.base + int64(value(b.mem[2])) + Room; need > b.held {
		b.held = need
		debug.SetMemoryLimit(min(b.held, b.before))
	}
	b.watch(gen)
}

// Stop ends the bound for good (its stream is over): a hold ends and the
// process's own limit is back, as Relax puts it back during a burst. The
// GC percent is left as Relax set it. Without Stop a held limit would
// follow the live heap for the rest of the process, beside the bound of
// the next stream.
func (b *Bound) Stop() {
	b.mu.Lock()
	b.hold = false
	held := b.held != 0 && b.next == 0
	b.held = 0
	b.gen++
	if held {
		debug.SetMemoryLimit(b.before)
	}
	b.mu.Unlock()
	b.Relax()
}

// Held is the limit Relax keeps (Hold), 0 when none applies.
func (b *Bound) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// keepPercent is the GC percent that leaves live bytes of heap a room of
// Room, at least MinPercent of it and at most the process's own percent:
// a big timeline keeps its garbage near a tenth of it, a small one gets
// the room it always had.
func keepPercent(live int64, own int) int {
	p := MinPercent
	if live > 0 {
		p = max(p, int(Room*100/live))
	}
	return min(p, own)
}

// gcSetting is the process's own GC percent, and whether a bound may set
// it: not when the person running perch chose one (GOGC).
type gcSetting struct {
	percent int
	own     bool
}

func processGC(getenv func(string) string) gcSetting {
	if getenv("GOGC") != "" {
		return gcSetting{}
	}
	return gcSetting{percent: 100, own: true}
}
