package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	r3 "github.com/r3labs/sse/v2"

	"github.com/perch-tui/perch/events"
)

// MaxEventBytes bounds one event, framing included, wherever events are
// read (a daemon's stream or a recorded file): the memory bound against
// absurd input, since decoded text is never cut. Events of 64 MiB must get
// through: a legacy execute_command result carries untruncated output, and
// at HEAD a PostToolCall carries its output twice.
const MaxEventBytes = 64<<20 + 1<<20

// ErrTruncated reports a stream that ended inside an event; that event is
// not delivered.
var ErrTruncated = errors.New("stream ends inside an event (truncated); the incomplete event was dropped")

// ErrEventTooLarge reports an event of more than MaxEventBytes; the stream
// can't be read past it.
var ErrEventTooLarge = fmt.Errorf("an event is larger than %d MiB", MaxEventBytes>>20)

// event is one event's fields, as the spec defines them.
type event struct {
	name  string
	data  []byte // its own copy: the reader's buffer is reused
	id    []byte // valid until the next read
	hasID bool   // an id field, even an empty one (which resets the last id)
	retry []byte // valid until the next read
}

// content: the event carries a field worth dispatching (r3labs' rule).
func (e *event) content() bool {
	return len(e.id) > 0 || len(e.data) > 0 || e.name != "" || len(e.retry) > 0
}

// fields splits one event, as r3labs' reader framed it, into its fields the
// way the spec (and r3labs' own client) does: lines end at CR or LF, a
// field is its name up to the first colon with one following space
// dropped, several data lines are joined by LF, comments and unknown
// fields are ignored. It copies the data once; with borrow, the data of
// one line is not copied but read in raw.
func fields(raw []byte, borrow bool) event {
	var e event
	lines := 0
	for len(raw) > 0 {
		i := lineEnd(raw)
		line := raw
		if i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		name, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "data":
			switch {
			case borrow && lines == 0:
				e.data = value
			case borrow && lines == 1:
				// A second line: the lines are joined in a copy, never
				// in raw, which is still being read.
				e.data = append(append(append([]byte(nil), e.data...), '\n'), value...)
			case lines > 0:
				e.data = append(append(e.data, '\n'), value...)
			default:
				// Not make and copy: make clears what the copy overwrites.
				e.data = append(e.data, value...)
			}
			if e.data == nil {
				e.data = []byte{}
			}
			lines++
		case "event":
			e.name = string(value)
		case "id":
			e.id, e.hasID = value, true
		case "retry":
			e.retry = value
		}
	}
	return e
}

// lineEnd is the index of the first CR or LF in b, or -1; a multi-MB data
// line costs one pass of IndexByte, where IndexAny goes byte by byte.
func lineEnd(b []byte) int {
	lf := bytes.IndexByte(b, '\n')
	head := b
	if lf >= 0 {
		head = b[:lf]
	}
	if cr := bytes.IndexByte(head, '\r'); cr >= 0 {
		return cr
	}
	return lf
}

// tail remembers how a stream's bytes end, so that the event r3labs'
// reader hands out at the end of a stream (it dispatches whatever is left
// there as if it were whole) can be told from a complete one: the stream
// ends at an event's end only when its last bytes are a blank line. It
// also stamps the time of every read for Activity.
type tail struct {
	r    io.Reader
	last [3]byte // the stream's last bytes, most recent last
	err  error   // the source's error, once it returned one
	act  *Activity
	fill bool // read until p is full (a file: waiting costs nothing)
	// since counts the bytes read since r3labs' reader last returned an
	// event: about the size of the event in progress (see readMin).
	since int
	// buf[off:] was read from r and not yet handed out (see readMin).
	buf []byte
	off int
}

// readMin bounds the reads r3labs' reader gets, so that its split works in
// linear time. The split looks for an event's end in everything its
// scanner holds, once for each event it returns and once after each read
// while an event is incomplete. So a read never hands it more than up to
// the first blank line in it (the rest is handed out by the next reads):
// a replay read in megabytes, or what was read past a large event's end,
// would otherwise be searched again for each of its events (a recording
// of a 16 MiB output and then 16 MiB of 100-byte events took 497 s, of
// 5 KB events 4.6 s). And a read gets at most readMin bytes, or as many
// as were read since the last event was returned, so that a large event
// comes in reads that double instead of being searched again after each
// of many small ones (BenchmarkSubscribeLargeFrames). 32 KiB: on maria's
// 10,000-event replay uncapped reads cost 3.9-4.1 s of processor time for
// 11 replays with the fake daemon's setup, 16 or 32 KiB 3.5-3.6 s.
const readMin = 32 << 10

// Read hands r3labs' reader the source's bytes up to the next blank line.
// Small reads go through buf, so that each byte is copied once on its way
// (the events after the first of a read wait there); a read for a large
// event goes straight into p, and only what came after the event's end
// waits in buf.
func (t *tail) Read(p []byte) (int, error) {
	p = p[:min(len(p), max(readMin, t.since))]
	var n int
	switch {
	case t.off < len(t.buf):
		n = copy(p, t.buf[t.off:])
		n = firstBlank(p[:n])
		t.off += n
	case t.err != nil:
		return 0, t.err
	case len(p) > readMin:
		n = t.fetch(p)
		k := firstBlank(p[:n])
		t.buf, t.off = append(t.buf[:0], p[k:n]...), 0
		n = k
	default:
		if cap(t.buf) < readMin {
			t.buf = make([]byte, readMin)
		}
		t.buf, t.off = t.buf[:t.fetch(t.buf[:readMin])], 0
		n = copy(p, t.buf)
		n = firstBlank(p[:n])
		t.off = n
	}
	if t.off == len(t.buf) && cap(t.buf) > readMin {
		t.buf, t.off = nil, 0 // what a large read left behind
	}
	t.since += n
	if n >= len(t.last) {
		copy(t.last[:], p[n-len(t.last):n])
	} else if n > 0 {
		copy(t.last[:], t.last[n:])
		copy(t.last[len(t.last)-n:], p[:n])
	}
	if t.act != nil && n > 0 {
		t.act.partial.Store(!t.atEnd())
	}
	if t.off < len(t.buf) {
		return n, nil
	}
	return n, t.err
}

// fetch reads from the source into p, keeps its error and stamps the
// time, and returns how many bytes came.
func (t *tail) fetch(p []byte) int {
	var n int
	var err error
	if t.fill {
		n, err = io.ReadFull(t.r, p)
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
	} else {
		if t.act != nil {
			t.act.waiting.Store(true)
		}
		n, err = t.r.Read(p)
	}
	if err != nil && t.err == nil {
		t.err = err
	}
	if t.act != nil {
		if n > 0 {
			t.act.last.Store(time.Now().UnixNano())
		}
		t.act.waiting.Store(false)
	}
	return n
}

// firstBlank is the length of b up to and including its first blank line
// (as r3labs' reader tells one: LF LF, CR CR, LF CR LF), or len(b). Where
// a read is cut is only a read's size: r3labs' reader still finds the
// events, and a blank line split across two reads only makes a read
// longer.
func firstBlank(b []byte) int {
	end := len(b)
	if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
		end = i + 2
	}
	// A stream of CR or CRLF line ends: looked for only before the first
	// LF LF, so that each byte is looked at a bounded number of times,
	// and only when that part holds a CR at all.
	if bytes.IndexByte(b[:end], '\r') < 0 {
		return end
	}
	if i := bytes.Index(b[:end], []byte("\r\r")); i >= 0 {
		end = i + 2
	}
	if i := bytes.Index(b[:end], []byte("\n\r\n")); i >= 0 {
		end = min(end, i+3)
	}
	return end
}

// atEnd reports whether the bytes so far end at an event's end (a blank
// line, as r3labs' reader tells one).
func (t *tail) atEnd() bool {
	l := t.last
	return l[1] == '\n' && l[2] == '\n' || l[1] == '\r' && l[2] == '\r' || string(l[:]) == "\n\r\n"
}

// unfinished reports whether the source is done, everything read was
// handed out, and the last event is unfinished.
func (t *tail) unfinished() bool { return t.err != nil && t.off == len(t.buf) && !t.atEnd() }

// readEvents frames r with r3labs' EventStreamReader and hands each
// event to fn, in order (fn picks those worth dispatching), until r ends, fn fails or an event is
// larger than max. A clean end is nil; an end inside an event is
// ErrTruncated (that event is dropped); an event too large is
// ErrEventTooLarge; a read error is returned as it is. With fill, r is
// read until each read is full (a file); otherwise each read returns what
// the source has (a live stream). act, if not nil, follows the reads.
func readEvents(r io.Reader, max int, fill, borrow bool, act *Activity, fn func(*event) error) error {
	src := &tail{r: r, act: act, fill: fill}
	if act != nil {
		act.partial.Store(false) // a new stream
		act.waiting.Store(false)
	}
	// r3labs' split looks for an event's end from the start of what its
	// scanner holds after every read, so a large event read in small
	// pieces would cost the square of its size. A file is read in full
	// reads (fill); a live body is read as it is: net/http's chunked
	// reader fills each read while a chunk lasts, and a buffer in front
	// of it measured slower (8 MiB events, 4 KiB to 8 MiB server writes:
	// 450-495 MB/s as it is, 330-370 MB/s through a 64 or 256 KiB
	// bufio.Reader; BenchmarkSubscribeLargeFrames).
	rd := r3.NewEventStreamReader(src, max)
	var held []byte // after the source ended: the event read last, maybe its unfinished tail
	holding, first := false, true
	for {
		raw, err := rd.ReadEvent()
		src.since = 0
		if first && err == nil {
			first = false
			raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")) // a leading BOM is not part of the stream
		}
		if holding {
			holding = false
			e := fields(held, borrow)
			if err != nil {
				// The last event of a stream that did not end at an
				// event's end: it is unfinished.
				if e.content() || e.data != nil {
					return ErrTruncated
				}
			} else if err := fn(&e); err != nil {
				return err
			}
		}
		if err != nil {
			switch {
			case errors.Is(err, bufio.ErrTooLong):
				return ErrEventTooLarge
			case src.err == nil || src.err == io.EOF:
				return nil // r3labs reports every end as EOF; the source knows
			}
			return src.err
		}
		if src.unfinished() {
			// Everything left is in memory now: look one event ahead.
			held, holding = append(held[:0], raw...), true
			continue
		}
		big := len(raw) >= bigEvent
		e := fields(raw, borrow)
		if err := fn(&e); err != nil {
			return err
		}
		if big && src.atEnd() {
			// r3labs' reader keeps a buffer as large as the largest event
			// for good. It holds nothing now (no read goes past a blank
			// line), so a new one goes on where it stopped.
			rd = r3.NewEventStreamReader(src, max)
		}
	}
}

// bigEvent is the size from which the reader of an event is replaced
// after it (see readEvents): a 30 MiB tool output left 32 MiB behind.
const bigEvent = 1 << 20

// Activity follows a stream's incoming bytes, for a caller that waits for
// it to go quiet: a large event can take longer to arrive than a quiet
// window, and no frame shows while it does; one read whole can take
// longer to frame, split and decode than the window, too. Its zero value
// is ready to use.
type Activity struct {
	last    atomic.Int64 // unix nanoseconds of the last bytes read
	partial atomic.Bool  // the bytes read end inside an event
	// waiting: the stream's goroutine waits for bytes from the server;
	// otherwise it is busy with what it read (framing it, handing an
	// event over), or between connections.
	waiting atomic.Bool
}

// Quiet is how long no byte has come in while the stream's goroutine
// waited for more, with no event partly received: 0 while one is, or
// while that goroutine is busy with what it read; a very long time
// before the first byte.
func (a *Activity) Quiet() time.Duration {
	if a.partial.Load() || !a.waiting.Load() {
		return 0
	}
	last := a.last.Load()
	if last == 0 {
		return 1<<63 - 1
	}
	return max(time.Since(time.Unix(0, last)), 0)
}

// Busy reports whether an event is partly received, the stream's
// goroutine is busy with what it read, or bytes arrived within the last d.
func (a *Activity) Busy(d time.Duration) bool {
	return a.partial.Load() || !a.waiting.Load() || a.Quiet() < d
}

// ReadFrames parses a server-sent-events stream (a recorded file, or any
// reader) with the same reader as a live stream, and calls fn for each
// complete event that carries data, following the WHATWG rules: `event:`/
// `data:` fields, several data lines joined by "\n", comments and `id:`/
// `retry:` ignored, LF, CRLF or CR line ends, a leading BOM. An event is
// complete only at its blank line, so a truncated tail is dropped and
// reported as ErrTruncated. An event larger than MaxEventBytes stops the
// read with ErrEventTooLarge. fn's error stops the read and is returned.
// Each frame's data is its own.
func ReadFrames(r io.Reader, fn func(events.Frame) error) error {
	var fnErr error
	err := readEvents(r, MaxEventBytes, true, false, nil, func(e *event) error {
		if e.data == nil {
			return nil
		}
		fnErr = fn(events.Frame{Name: e.name, Data: e.data})
		return fnErr
	})
	if err == nil || err == fnErr || errors.Is(err, ErrTruncated) || errors.Is(err, ErrEventTooLarge) {
		return err
	}
	return fmt.Errorf("read event stream: %w", err)
}
