// Package ordered runs a pure function over a sequence on several
// goroutines and hands the results back in the sequence's order. perch
// uses it to decode a stream's frames on every core while the stateful
// part of decoding (maria's replay dedupe) still sees them in order.
package ordered

import (
	"runtime"
	"sync"
)

// Pool maps f over what is Put, on its workers, and yields the results in
// the order of Put. What is in flight (put, not yet waited for) is bounded
// by a count and by a total size, so a fast producer waits for a slow
// consumer instead of growing the heap.
type Pool[I, O any] struct {
	f        func(I) O
	jobs     chan *Ticket[I, O]
	order    chan *Ticket[I, O]
	maxBytes int
	free     sync.Pool

	putMu  sync.Mutex // one Put or Close at a time
	closed bool

	mu      sync.Mutex
	bytes   int // sizes of what is in flight
	pending int // put, not yet waited for
	space   chan struct{}

	workers sync.WaitGroup
}

// Ticket is one result's place in the order.
type Ticket[I, O any] struct {
	in   I
	out  O
	size int
	done chan struct{}
	p    *Pool[I, O]
}

// Workers is the number of workers a pool should have: one per processor
// Go may use.
func Workers() int { return max(1, runtime.GOMAXPROCS(0)) }

// New starts a pool of workers goroutines. At most depth items are in
// flight, and no more once their sizes add up to maxBytes (one item always
// fits, however large). Close it to stop the workers.
func New[I, O any](workers, depth, maxBytes int, f func(I) O) *Pool[I, O] {
	workers, depth = max(1, workers), max(1, depth)
	p := &Pool[I, O]{
		f: f, maxBytes: maxBytes,
		// Every ticket in jobs is either in order or the one the consumer
		// waits for: jobs never fills.
		jobs:  make(chan *Ticket[I, O], depth+1),
		order: make(chan *Ticket[I, O], depth),
		space: make(chan struct{}, 1),
	}
	p.workers.Add(workers)
	for range workers {
		go p.work()
	}
	return p
}

func (p *Pool[I, O]) work() {
	defer p.workers.Done()
	for t := range p.jobs {
		t.out = p.f(t.in)
		var zero I
		t.in = zero // the input is done with (a raw frame: let it go)
		t.done <- struct{}{}
	}
}

// Put queues in, of the given size, waiting while the pool is full. It
// returns false, without queueing, when cancel is closed first or the pool
// is closed.
func (p *Pool[I, O]) Put(in I, size int, cancel <-chan struct{}) bool {
	p.putMu.Lock()
	defer p.putMu.Unlock()
	if p.closed {
		return false
	}
	p.mu.Lock()
	for p.pending > 0 && p.bytes+size > p.maxBytes {
		p.mu.Unlock()
		select {
		case <-p.space:
		case <-cancel:
			return false
		}
		p.mu.Lock()
	}
	p.bytes += size
	p.pending++
	p.mu.Unlock()

	t, _ := p.free.Get().(*Ticket[I, O])
	if t == nil {
		t = &Ticket[I, O]{done: make(chan struct{}, 1), p: p}
	}
	t.in, t.size = in, size
	select {
	case p.order <- t:
	case <-cancel:
		p.release(size)
		return false
	}
	p.jobs <- t
	return true
}

// Close tells the pool nothing more comes: Results is closed once drained,
// and the workers stop once they have done what was put.
func (p *Pool[I, O]) Close() {
	p.putMu.Lock()
	defer p.putMu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	close(p.order)
	close(p.jobs)
}

// Wait returns once the workers have stopped (after Close).
func (p *Pool[I, O]) Wait() { p.workers.Wait() }

// Results yields the tickets in the order of Put; each must be waited for
// (Ticket.Wait) before the next one is taken. It is closed after Close,
// once everything was taken.
func (p *Pool[I, O]) Results() <-chan *Ticket[I, O] { return p.order }

// Pending tells how many items were put and not yet waited for: zero means
// nothing is on its way to the consumer.
func (p *Pool[I, O]) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pending
}

// Wait returns the ticket's result once a worker has made it. The ticket
// is reused afterwards: do not keep it.
func (t *Ticket[I, O]) Wait() O {
	<-t.done
	out, p, size := t.out, t.p, t.size
	var zero O
	t.out = zero
	p.free.Put(t)
	p.release(size)
	return out
}

func (p *Pool[I, O]) release(size int) {
	p.mu.Lock()
	p.bytes -= size
	p.pending--
	p.mu.Unlock()
	select {
	case p.space <- struct{}{}:
	default:
	}
}
