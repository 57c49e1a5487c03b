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
// The limit is process-wide: only a program that owns its process (perch's
// export, perch's TUI) may use it.
package memlimit

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

const (
	Slack = 5 << 20 // room above the bytes read
	Floor = 8 << 20 // the least room for garbage above the live heap
	Step  = 1 << 20 // the limit moves every this many bytes
)

// Bound is one stream's limit. Its methods may be called from several
// goroutines.
type Bound struct {
	mu     sync.Mutex
	bytes  func() int64
	next   int64 // bytes read at the next update; 0: not applied
	before int64 // the limit to restore
	base   int64 // the Go memory in use before the stream
	live   []metrics.Sample
}

// Start applies a limit that follows bytes (the stream's bytes read so
// far). before is the limit to come back to (Relax): the process's own,
// as debug.SetMemoryLimit(-1) reports it before any Bound was started.
func Start(bytes func() int64, before int64) *Bound {
	b := &Bound{bytes: bytes, before: before, live: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}}
	metrics.Read(b.live)
	b.base = int64(value(b.live[1]) - value(b.live[2]))
	b.live = b.live[:1]
	b.Update()
	return b
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
	metrics.Read(b.live)
	live := int64(value(b.live[0]))
	limit := max(n+Slack, b.base+live+Floor)
	debug.SetMemoryLimit(min(limit, b.before))
}

// Relax puts the previous limit back until the next Update.
func (b *Bound) Relax() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next != 0 {
		b.next = 0
		debug.SetMemoryLimit(b.before)
	}
}
