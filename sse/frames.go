package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"

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

// takeAbove is the size from which a data line is handed to its frame as
// it lies in the read buffer, instead of being copied out of it.
const takeAbove = 256 << 10

// ReadFrames parses a server-sent-events stream (a recorded file, or any
// reader) and calls fn for each complete event, following the WHATWG rules:
// `event:`/`data:` fields, several data lines joined by "\n", comments and
// `id:`/`retry:` ignored, LF, CRLF or CR line ends, a leading BOM. An event
// is complete only at its blank line, so a truncated tail is dropped and
// reported as ErrTruncated. An event larger than MaxEventBytes stops the read
// with ErrEventTooLarge. fn's error stops the read and is returned.
//
// Each frame's data is its own: a large data line (a tool output) is handed
// over in the buffer it was read into, not copied, and the reader moves on
// in a new buffer. So an event costs about its size once while fn runs, and
// nothing after fn drops the frame.
func ReadFrames(r io.Reader, fn func(events.Frame) error) error {
	lr := &lineReader{r: r, buf: make([]byte, readRoom), max: MaxEventBytes}
	var (
		name    string
		data    bytes.Buffer // small data lines, joined
		big     []byte       // a large data line taken from the reader (then the data so far)
		hasData bool
		pending bool // any field seen since the last dispatch
		size    int  // bytes of the event so far, line ends included
		first   = true
	)
	for {
		line, err := lr.line()
		if err != nil && len(line) == 0 {
			if errors.Is(err, io.EOF) {
				if pending {
					return ErrTruncated
				}
				return nil
			}
			if errors.Is(err, ErrEventTooLarge) {
				return err
			}
			return fmt.Errorf("read event stream: %w", err)
		}
		if first {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			first = false
		}
		if err != nil {
			// A last line without its line end: the event is incomplete.
			if errors.Is(err, io.EOF) {
				return ErrTruncated
			}
			return fmt.Errorf("read event stream: %w", err)
		}
		if len(line) == 0 {
			if hasData {
				f := events.Frame{Name: name, Data: big}
				if big == nil {
					f.Data = bytes.Clone(data.Bytes())
				}
				big = nil
				if err := fn(f); err != nil {
					return err
				}
			}
			name, hasData, pending, size = "", false, false, 0
			data.Reset()
			if data.Cap() > takeAbove {
				data = bytes.Buffer{}
			}
			continue
		}
		if size += len(line) + 1; size > MaxEventBytes {
			return ErrEventTooLarge
		}
		if line[0] == ':' {
			continue
		}
		pending = true
		field, value, found := bytes.Cut(line, []byte(":"))
		if found {
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			switch {
			case big != nil:
				big = append(append(big, '\n'), value...)
			case !hasData && len(value) >= takeAbove:
				big = lr.take(value)
			default:
				if hasData {
					data.WriteByte('\n')
				}
				data.Write(value)
			}
			hasData = true
		}
	}
}

// readRoom is the least room a read gets, readMax the most.
const (
	readRoom = 64 << 10
	readMax  = 1 << 20
)

// lineReader splits a stream into lines ended by LF, CRLF or CR, with
// linear cost however long a line is, up to max bytes a line.
type lineReader struct {
	r          io.Reader
	buf        []byte
	start, end int
	scanned    int // bytes after start known to hold no line end
	skipLF     bool
	err        error
	max        int
}

// line returns the next line without its end; it is valid until the next
// call. A last line without a line end comes back with the read error.
func (l *lineReader) line() ([]byte, error) {
	for {
		if l.skipLF && l.start < l.end {
			if l.buf[l.start] == '\n' {
				l.start++
			}
			l.skipLF = false
		}
		if i := bytes.IndexAny(l.buf[l.start+l.scanned:l.end], "\r\n"); i >= 0 {
			i += l.start + l.scanned
			line := l.buf[l.start:i]
			l.skipLF = l.buf[i] == '\r'
			l.start, l.scanned = i+1, 0
			return line, nil
		}
		l.scanned = l.end - l.start
		if l.err != nil {
			line := l.buf[l.start:l.end]
			l.start, l.scanned = l.end, 0
			return line, l.err
		}
		if l.scanned > l.max {
			l.err = ErrEventTooLarge
			return nil, l.err
		}
		if l.start > 0 && l.start == l.end {
			l.start, l.end = 0, 0
		}
		if l.end == len(l.buf) {
			// Move the unread part to the front, of a new buffer when there
			// would not be a read's worth of room.
			n := l.end - l.start
			if n+readRoom > len(l.buf) {
				size := 2 * len(l.buf)
				if size > 1<<20 {
					// A line this long may be a huge tool output: reserve
					// room for the largest event at once. Room never
					// written costs no memory, where doubling on would
					// leave a trail of copies behind, as large as the
					// line, before the garbage collector returns them.
					size = max(size, l.max+readRoom)
				}
				nb := make([]byte, size)
				copy(nb, l.buf[l.start:l.end])
				l.buf = nb
			} else {
				copy(l.buf, l.buf[l.start:l.end])
			}
			l.start, l.end = 0, n
		}
		// Reads are bounded so that little is read past a huge line: what
		// follows it is moved to a new buffer when the line is taken.
		n, err := l.r.Read(l.buf[l.end:min(len(l.buf), l.end+readMax)])
		l.end += n
		if err != nil {
			l.err = err
		}
	}
}

// take hands line, the line line() returned last, over to the caller for
// good: it stays where it is, and the reader goes on in a new buffer.
func (l *lineReader) take(line []byte) []byte {
	nb := make([]byte, max(readRoom, l.end-l.start+readRoom))
	l.end = copy(nb, l.buf[l.start:l.end])
	l.start = 0
	l.buf = nb
	return line[:len(line):len(line)]
}
