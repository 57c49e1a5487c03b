package client

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// eventReader guards an SSE response body for r3labs/sse, whose scanner
// dispatches whatever tail it holds at EOF as if it were a complete event
// . It releases bytes only up to the end of complete events
// (a blank line, with any mix of CR, LF and CRLF line endings), holds the
// unfinished remainder back, and at the end of the body reports
// io.ErrUnexpectedEOF if an unfinished event was pending, so r3labs treats
// the close as abrupt and reconnects instead of delivering half an event.
//
// It also makes r3labs' scanner linear: the scanner's split function
// rescans its whole buffer after every Read, so each Read here hands out at
// most one event (as much of it as fits). A large event is then scanned in
// buffer-doubling steps, and a burst of small events never sits in the
// scanner buffer at once.
//
// Scanning is O(n): line state (start of line, last byte CR) persists across
// reads, and each byte is examined once (runs of field bytes are skipped
// with bytes.IndexByte).
type eventReader struct {
	src io.ReadCloser
	max int // largest event accepted, including its framing

	buf    []byte // buf[r:] is not yet handed out
	r      int
	bounds []int // ends of complete events in buf, ascending; bounds[head:] are pending
	head   int
	err    error // sticky error from src (io.EOF included)

	// Line state at the end of buf, carried across reads.
	lineEmpty bool // no field bytes since the last line terminator
	prevCR    bool // the last byte was CR (a following LF belongs to it)
	content   bool // field bytes seen since the last event boundary
}

// errEventTooLarge: an event outgrew the reader's limit; the stream can't
// be read past it.
var errEventTooLarge = errors.New("event too large")

const (
	eventReadChunk   = 64 << 10 // read from the network at least this much at a time
	eventShrinkAbove = 4 << 20  // drop a buffer this large once it's empty
)

func newEventReader(src io.ReadCloser, max int) *eventReader {
	return &eventReader{src: src, max: max, lineEmpty: true}
}

func (e *eventReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for e.head == len(e.bounds) {
		if e.err != nil {
			return 0, e.finalErr()
		}
		e.fill()
	}
	end := e.bounds[e.head]
	n := copy(p, e.buf[e.r:end])
	e.r += n
	if e.r == end {
		e.head++
	}
	return n, nil
}

func (e *eventReader) Close() error { return e.src.Close() }

// finalErr is what the reader reports once src is done and every complete
// event has been handed out.
func (e *eventReader) finalErr() error {
	if e.err == io.EOF {
		if e.content {
			return io.ErrUnexpectedEOF
		}
		return io.EOF
	}
	return e.err
}

// fill reads once from src and scans what arrived. Only called when no
// complete event is pending, so nothing in buf before r is needed and the
// boundary list is empty while the buffer is compacted.
func (e *eventReader) fill() {
	e.bounds, e.head = e.bounds[:0], 0
	if e.r == len(e.buf) {
		if cap(e.buf) > eventShrinkAbove {
			e.buf = nil
		}
		e.buf, e.r = e.buf[:0], 0
	}
	if cap(e.buf)-len(e.buf) < eventReadChunk {
		if e.r > 0 {
			n := copy(e.buf, e.buf[e.r:])
			e.buf, e.r = e.buf[:n], 0
		}
		if cap(e.buf)-len(e.buf) < eventReadChunk {
			if len(e.buf) >= e.max {
				e.err = fmt.Errorf("%w: more than %d MiB", errEventTooLarge, e.max>>20)
				return
			}
			nb := make([]byte, len(e.buf), max(2*cap(e.buf), len(e.buf)+eventReadChunk))
			copy(nb, e.buf)
			e.buf = nb
		}
	}
	start := len(e.buf)
	n, err := e.src.Read(e.buf[start:cap(e.buf)])
	e.buf = e.buf[:start+n]
	e.scan(start)
	if err != nil {
		e.err = err
	} else if n == 0 {
		// A reader returning (0, nil) forever would spin; io.Reader
		// discourages it, and a body doing it is broken.
		e.err = io.ErrNoProgress
	}
}

// scan advances the line state over buf[from:], recording event ends.
func (e *eventReader) scan(from int) {
	b := e.buf
	nextCR := -1 // index of the next CR at or after i, or len(b); -1: unknown
	for i := from; i < len(b); {
		switch b[i] {
		case '\n':
			if e.prevCR {
				// The LF of a CRLF: the line ended at the CR. If that CR
				// closed an event, the LF belongs to the same boundary.
				e.prevCR = false
				if k := len(e.bounds); k > e.head && e.bounds[k-1] == i {
					e.bounds[k-1] = i + 1
				}
			} else {
				e.endLine(i + 1)
			}
			i++
		case '\r':
			e.prevCR = true
			e.endLine(i + 1)
			i++
		default:
			e.prevCR = false
			e.lineEmpty = false
			e.content = true
			// Skip to the next line terminator. The next CR is looked up
			// once and reused until passed, so CR-free data costs one pass.
			if nextCR < i {
				nextCR = bytes.IndexByte(b[i:], '\r')
				if nextCR < 0 {
					nextCR = len(b)
				} else {
					nextCR += i
				}
			}
			j := bytes.IndexByte(b[i:nextCR], '\n')
			if j < 0 {
				i = nextCR
			} else {
				i += j
			}
		}
	}
}

// endLine handles a line terminator ending just before end: a blank line
// closes the pending event, if it has any content.
func (e *eventReader) endLine(end int) {
	if e.lineEmpty && e.content {
		e.bounds = append(e.bounds, end)
		e.content = false
	}
	e.lineEmpty = true
}
