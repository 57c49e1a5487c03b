package sse

import (
	"sync"

	"github.com/perch-tui/perch/events"
)

// The data of small frames is copied out of the read buffer (see
// eventReader.sidelineRun), because the read buffer is reused for the next
// read. A fresh slice per read made that copy the reader's largest cost on
// a long replay (each copy the first touch of new heap pages, and a
// replay's worth of garbage for the collector). A caller that decodes each
// frame and keeps nothing of it can hand the frames back
// (Progress.LendFrames, Progress.Recycle): their data is then carved from
// slabs that come back once every frame in them was handed back, so the
// copies land in memory that is already mapped and warm.

const (
	slabSize  = 512 << 10 // one slab holds the frames of several reads
	freeSlabs = 4         // slabs kept for reuse; more go to the collector
)

// slab is memory the small frames' data is carved from, front to back.
type slab struct {
	buf  []byte
	used int
	refs int // frames carved from it and not yet handed back
}

// lender hands out room for frames' data and takes it back. Its zero
// value lends nothing (every frame's data is a new slice).
type lender struct {
	mu   sync.Mutex
	on   bool
	lent map[*byte]*slab // by the first byte of each frame's data
	cur  *slab           // being carved
	free []*slab
}

// enable makes the lender lend from slabs.
func (l *lender) enable() {
	l.mu.Lock()
	l.on = true
	l.mu.Unlock()
}

// carve returns the frames of a run of small events, the data of those
// that lie in the read buffer (single) copied into one slice that they
// share, each with a cap that ends at its end. size is the sum of those
// data's lengths. With lending on, the slice is part of a slab and each of
// those frames is lent until it is recycled.
func (l *lender) carve(parsed []parsedEvent, size int) []events.Frame {
	var dst []byte
	l.mu.Lock()
	if l.on && size <= slabSize {
		if l.cur == nil || len(l.cur.buf)-l.cur.used < size {
			l.retire(l.cur)
			l.cur = l.take()
		}
		s := l.cur
		dst = s.buf[s.used : s.used : s.used+size]
		s.used += size
		if l.lent == nil {
			l.lent = make(map[*byte]*slab)
		}
		at := s.used - size
		for _, p := range parsed {
			if p.single && len(p.f.Data) > 0 {
				l.lent[&s.buf[at]] = s
				s.refs++
				at += len(p.f.Data)
			}
		}
	}
	l.mu.Unlock()
	if dst == nil {
		dst = make([]byte, 0, size)
	}
	frames := make([]events.Frame, len(parsed))
	for i, p := range parsed {
		f := p.f
		if p.single {
			at := len(dst)
			dst = append(dst, f.Data...)
			f.Data = dst[at:len(dst):len(dst)]
		}
		frames[i] = f
	}
	return frames
}

// take returns an empty slab, a recycled one if there is one. l.mu is held.
func (l *lender) take() *slab {
	if n := len(l.free); n > 0 {
		s := l.free[n-1]
		l.free[n-1] = nil
		l.free = l.free[:n-1]
		s.used = 0
		return s
	}
	return &slab{buf: make([]byte, slabSize)}
}

// retire is called when s stops being carved: it is free once nothing
// carved from it is lent. l.mu is held.
func (l *lender) retire(s *slab) {
	if s != nil && s.refs == 0 && len(l.free) < freeSlabs {
		l.free = append(l.free, s)
	}
}

// recycle takes back the data of one lent frame; anything else is ignored.
func (l *lender) recycle(data []byte) {
	if len(data) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.lent[&data[0]]
	if !ok {
		return
	}
	delete(l.lent, &data[0])
	s.refs--
	if s.refs == 0 && s != l.cur {
		l.retire(s)
	}
}
