// Package textmem carves the large texts of a replay (tools' outputs) from
// chunks of memory, instead of an allocation each. There are two kinds of
// Arena:
//
//   - New: chunks from the Go heap. The texts lie packed, without the
//     rounding of the allocator's size classes and without an object each
//     for the collector; a chunk is collected with its texts (it stays
//     while any of them is referenced, so an Arena suits texts that live
//     and die together: one session's replay). The 10k-event session's UI
//     is about 1 MB smaller at its peak (docs/performance.md, "Text
//     memory").
//   - NewMapped: chunks mapped outside the heap and advised for huge
//     pages, never given back, for a process whose work ends with it
//     (export). A long replay's texts are tens of megabytes, every 4 KiB
//     page of them is faulted in once, and on a virtual machine each fault
//     is expensive: an export of a 48 MB replay took 10,000 of them, about
//     a third of its processor time. Go's heap does not ask for huge pages,
//     and the kernel gives them only to memory that asks (the common
//     "madvise" setting). Where that cannot be asked (not Linux) it hands
//     out nothing and the texts stay on the heap.
package textmem

import "sync"

const (
	// heapChunk is a New arena's chunk, heapMaxText the largest text it
	// takes: a larger one would leave up to as much unused at a chunk's
	// end, and is an allocation of its own anyway.
	heapChunk   = 1 << 20
	heapMaxText = 256 << 10

	// mappedChunk is one mapping of a NewMapped arena (untouched pages
	// cost nothing but address space), MaxText the largest text it takes:
	// a bigger one is a rare giant that stays with the collector.
	mappedChunk = 32 << 20
	MaxText     = 1 << 20
)

// Arena hands out memory for texts. Safe for concurrent use.
type Arena struct {
	mu      sync.Mutex
	free    []byte // the rest of the current chunk
	maxText int
	// chunk returns a new chunk, or nil when there is none to have.
	chunk     func() []byte
	allocated int64
	done      bool // closed, or out of chunks
}

// New returns an Arena with chunks from the Go heap.
func New() *Arena {
	return &Arena{maxText: heapMaxText, chunk: func() []byte { return make([]byte, heapChunk) }}
}

// NewMapped returns an Arena with chunks mapped for huge pages, at most
// limit bytes in all, never given back: only for a process whose work
// ends with the texts. Off Linux it hands out nothing.
func NewMapped(limit int64) *Arena {
	a := &Arena{maxText: MaxText}
	a.chunk = func() []byte {
		if !supported || a.allocated+mappedChunk > limit {
			return nil
		}
		b, err := mapChunk(mappedChunk)
		if err != nil {
			return nil
		}
		return b
	}
	return a
}

// Bytes returns n bytes of zeroed memory, or nil: n is 0 or over the
// Arena's largest text, or the Arena is nil, closed or out of chunks. Then
// the caller allocates.
func (a *Arena) Bytes(n int) []byte {
	if a == nil || n <= 0 || n > a.maxText {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return nil
	}
	if len(a.free) < n {
		c := a.chunk()
		if len(c) < n {
			a.done, a.free = true, nil
			return nil
		}
		a.allocated += int64(len(c))
		a.free = c
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
	a.done, a.free = true, nil
	a.mu.Unlock()
}

// Allocated is how much memory the Arena took in chunks (for a mapped
// one, address space: not all of it touched).
func (a *Arena) Allocated() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.allocated
}
