// Package textmem keeps the large texts of a replay (tools' outputs) in
// memory the kernel can back with huge pages, for a process that keeps
// them until it exits (export).
//
// Why: a long replay's texts are tens of megabytes that the process keeps
// to the end, and every 4 KiB page of them is faulted in, zeroed and mapped
// once. On a virtual machine each such fault is expensive: an export of a
// 48 MB replay took 10,000 of them, about a third of its processor time
// (docs/performance.md, "Text memory"). Go's heap is not advised for huge
// pages, and the kernel gives them only to memory that asks (the common
// "madvise" setting), so the texts go to mappings of their own that ask.
//
// Memory handed out is never given back: an Arena is for a process whose
// work ends with it. Where huge pages cannot be asked for (not Linux) an
// Arena hands out nothing and the texts stay on the heap.
package textmem

import "sync"

const (
	// chunkSize is one mapping. Untouched pages cost nothing but address
	// space; what a chunk cannot fit at its end is left unused.
	chunkSize = 32 << 20
	// MaxText is the largest text an Arena takes: a bigger one is a rare
	// giant that perch may cut or drop, so it stays with the collector.
	MaxText = 1 << 20
)

// Arena hands out memory for texts, up to a limit. Safe for concurrent use.
type Arena struct {
	mu     sync.Mutex
	free   []byte // the rest of the current chunk
	mapped int64
	limit  int64
	closed bool
	failed bool
}

// New returns an Arena that maps at most limit bytes in all.
func New(limit int64) *Arena { return &Arena{limit: limit} }

// Bytes returns n bytes of zeroed memory that stay valid for the life of
// the process, or nil: n is 0 or over MaxText, the Arena is closed or at
// its limit, or memory could not be mapped. Then the caller uses the heap.
func (a *Arena) Bytes(n int) []byte {
	if a == nil || n <= 0 || n > MaxText {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || a.failed {
		return nil
	}
	if len(a.free) < n {
		if a.mapped+chunkSize > a.limit {
			return nil
		}
		chunk, err := mapChunk(chunkSize)
		if err != nil || len(chunk) < n {
			a.failed = true
			return nil
		}
		a.mapped += int64(len(chunk))
		a.free = chunk
	}
	b := a.free[:n:n]
	a.free = a.free[n:]
	return b
}

// Close stops handing out memory; what was handed out stays valid.
func (a *Arena) Close() {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.closed = true
	a.free = nil
	a.mu.Unlock()
}

// Mapped is how much memory the Arena mapped (address space, not all of
// it touched).
func (a *Arena) Mapped() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mapped
}
