package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/perch-tui/perch/events"
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
//
// With a stream's side (see streamSide), events do not go through r3labs
// at all: r3labs would copy each into its scanner's buffer (which it keeps
// for the connection, as large as the largest event), split its lines
// again and copy its data once more, and hand each to the subscriber's
// goroutine over a channel. The reader parses each event as r3labs would,
// queues the frames on the side — the small events of a read together, as
// one run, their data copied into one slice; a large one alone, its data
// left where it was read — and hands r3labs a small stub event that names
// the run instead. It also tells the side whether an event is partly received and
// how many are read but not yet delivered.
type eventReader struct {
	src  io.ReadCloser
	max  int         // largest event accepted, including its framing
	side *streamSide // nil: no side-lining, no progress reports

	stub   []byte        // a stub event being handed out
	parsed []parsedEvent // sidelineRun's scratch
	mid    bool          // buf[r] is inside an event already partly handed out

	buf    []byte // buf[r:] is not yet handed out
	r      int
	bounds []int // ends of complete events in buf, ascending; bounds[head:] are pending
	head   int
	err    error // sticky error from src (io.EOF included)
	busy   bool  // the last read filled all the room it was given

	// Line state at the end of buf, carried across reads.
	lineEmpty bool // no field bytes since the last line terminator
	prevCR    bool // the last byte was CR (a following LF belongs to it)
	content   bool // field bytes seen since the last event boundary
}

// errEventTooLarge: an event outgrew the reader's limit; the stream can't
// be read past it.
var errEventTooLarge = errors.New("event too large")

// A read asks for eventReadChunk bytes, and for eventReadBusy while
// reads come back full: a replay then reaches the subscriber in runs of
// up to a quarter megabyte, each one hand-over between goroutines, where
// 64 KB runs made a day-long replay wait on four times as many. A read
// asks for no more, even when the buffer has grown larger: a run is held
// whole until its last event is decoded, and while the consumer falls
// behind two runs wait, so megabyte runs held four times the memory for
// no gain in speed. A stream gone quiet drops back to the small buffer,
// so that many idle streams (a board of sessions) hold little.
const (
	eventReadChunk   = 64 << 10  // read from the network this much at a time
	eventReadBusy    = 256 << 10 // this much while reads come back full
	eventShrinkAbove = 4 << 20   // drop a buffer this large once it's empty
)

// sideAbove is the size from which an event is side-lined.
const sideAbove = 256 << 10

func newEventReader(src io.ReadCloser, max int, side *streamSide) *eventReader {
	return &eventReader{src: src, max: max, side: side, lineEmpty: true}
}

func (e *eventReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if len(e.stub) > 0 {
			n := copy(p, e.stub)
			e.stub = e.stub[n:]
			return n, nil
		}
		for e.head == len(e.bounds) {
			if e.err != nil {
				if e.side != nil {
					e.side.receiving(false, 0, 0)
				}
				return 0, e.finalErr()
			}
			e.fill()
		}
		end := e.bounds[e.head]
		if e.side != nil && !e.mid {
			if end-e.r >= sideAbove {
				e.sideline(end)
			} else {
				e.sidelineRun()
			}
			continue
		}
		n := copy(p, e.buf[e.r:end])
		e.r += n
		e.mid = e.r != end
		if !e.mid {
			e.head++
		}
		return n, nil
	}
}

// sideline takes the large complete event buf[r:end] out of the byte
// stream: its frame goes to the side and a stub takes its place (nothing,
// if r3labs would not dispatch it). Its data, when it is one line, is left
// where it lies, and the reader moves what follows to a new buffer.
func (e *eventReader) sideline(end int) {
	f, id, single, ok := parseEvent(e.buf[e.r:end])
	if ok {
		e.stub = e.side.put([]events.Frame{f}, id)
	} else {
		e.side.delivered(1) // nothing to deliver
	}
	e.head++
	if !single {
		e.r = end
		return
	}
	rest := e.buf[end:]
	nb := make([]byte, len(rest), len(rest)+eventReadChunk)
	copy(nb, rest)
	for i := e.head; i < len(e.bounds); i++ {
		e.bounds[i] -= end
	}
	e.buf, e.r = nb, 0
}

// sidelineRun takes the small complete events pending in buf, up to the
// next large one, out of the byte stream as one batch behind one stub. A
// run of small events (a streamed answer, a few words per event) then
// costs r3labs one event, not one each: its scanner, its event and its
// channel hand-off to the subscriber's goroutine are paid per read rather
// than per event. The events' data are copied out of the buffer (reused
// by the next read) into one new slice, which the frames share.
func (e *eventReader) sidelineRun() {
	e.parsed = e.parsed[:0]
	size := 0
	var id []byte // the last id in the run, for r3labs' Last-Event-ID
	r := e.r
	for e.head < len(e.bounds) {
		end := e.bounds[e.head]
		if end-r >= sideAbove {
			break
		}
		f, fid, single, ok := parseEvent(e.buf[r:end])
		e.head++
		r = end
		if !ok {
			e.side.delivered(1) // nothing to deliver
			continue
		}
		if len(fid) > 0 {
			id = fid
		}
		if single {
			size += len(f.Data)
		}
		e.parsed = append(e.parsed, parsedEvent{f, single})
	}
	e.r = r
	if len(e.parsed) == 0 {
		return
	}
	frames := carve(e.parsed, size)
	clear(e.parsed) // no reference into buf outlives the read
	e.stub = e.side.put(frames, id)
}

// carve returns the frames of a run of small events, the data of those
// that lie in the read buffer (single) copied into one new slice that they
// share, each with a cap that ends at its end. size is the sum of those
// data's lengths.
func carve(parsed []parsedEvent, size int) []events.Frame {
	dst := make([]byte, 0, size)
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

// parsedEvent is a small event read by sidelineRun, before its data is
// copied out of the buffer.
type parsedEvent struct {
	f      events.Frame
	single bool // f.Data lies in the buffer
}

// lineEnd is the index of the first CR or LF in b, or -1.
func lineEnd(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	lim := b
	if i >= 0 {
		lim = b[:i]
	}
	if j := bytes.IndexByte(lim, '\r'); j >= 0 {
		return j
	}
	return i
}

// parseEvent reads one complete event the way r3labs' processEvent does:
// lines split at CR and LF, fields by prefix, one space after the colon
// dropped, data lines joined by LF. ok is false when r3labs would not
// dispatch it (nothing in it). single says that the data is one line, left
// in place in b (else it is a new slice); id, too, lies in b.
func parseEvent(b []byte) (f events.Frame, id []byte, single, ok bool) {
	var one [2][]byte // most events have one data line
	data := one[:0]
	var name, retry []byte
	field := func(line []byte, h string) ([]byte, bool) {
		if !bytes.HasPrefix(line, []byte(h)) {
			return nil, false
		}
		v := line[len(h):]
		if len(v) > 0 && v[0] == ' ' {
			v = v[1:]
		}
		return v, true
	}
	for len(b) > 0 {
		i := lineEnd(b)
		line := b
		if i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(line) == 0 {
			continue
		}
		if v, ok := field(line, "id:"); ok {
			id = v
		} else if v, ok := field(line, "data:"); ok {
			data = append(data, v)
		} else if string(line) == "data" {
			data = append(data, nil)
		} else if v, ok := field(line, "event:"); ok {
			name = v
		} else if v, ok := field(line, "retry:"); ok {
			retry = v
		}
	}
	f.Name = string(name)
	switch len(data) {
	case 0:
	case 1:
		f.Data = data[0][:len(data[0]):len(data[0])]
		single = true
	default:
		f.Data = bytes.Join(data, []byte("\n"))
	}
	ok = len(id) > 0 || len(f.Data) > 0 || len(name) > 0 || len(retry) > 0
	if len(f.Data) == 0 {
		f.Data, single = nil, false
	}
	return f, id, single, ok
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
	room := eventReadChunk
	if e.busy {
		room = eventReadBusy
	}
	if e.r == len(e.buf) {
		if cap(e.buf) > eventShrinkAbove || !e.busy && cap(e.buf) > eventReadChunk {
			e.buf = nil
		}
		e.buf, e.r = e.buf[:0], 0
	}
	if cap(e.buf)-len(e.buf) < room {
		if e.r > 0 {
			n := copy(e.buf, e.buf[e.r:])
			e.buf, e.r = e.buf[:n], 0
		}
		if cap(e.buf)-len(e.buf) < room {
			if len(e.buf) >= e.max {
				e.err = fmt.Errorf("%w: more than %d MiB", errEventTooLarge, e.max>>20)
				return
			}
			size := max(2*cap(e.buf), len(e.buf)+room)
			if size > eventShrinkAbove {
				// A huge event is coming: room for the largest at once.
				// Room never written costs no memory, where doubling on
				// would leave copies as large as the event behind.
				size = max(size, e.max+eventReadChunk)
			}
			nb := make([]byte, len(e.buf), size)
			copy(nb, e.buf)
			e.buf = nb
		}
	}
	start := len(e.buf)
	// Reads are bounded (see eventReadBusy), which also keeps what is read
	// past a huge event small: it is moved to a new buffer when the event
	// is side-lined.
	window := e.buf[start:min(cap(e.buf), start+room)]
	n, err := e.src.Read(window)
	e.busy = n == len(window)
	e.buf = e.buf[:start+n]
	e.scan(start)
	if e.side != nil {
		e.side.receiving(e.content, n, len(e.bounds))
	}
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
