package events

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrTruncated reports a stream that ended inside an event; that event is
// not delivered.
var ErrTruncated = errors.New("stream ends inside an event (truncated); the incomplete event was dropped")

// ReadFrames parses a server-sent-events stream (a recorded file, or any
// reader) and calls fn for each complete event, following the WHATWG rules:
// `event:`/`data:` fields, several data lines joined by "\n", comments and
// `id:`/`retry:` ignored, LF, CRLF or CR line ends, a leading BOM, and no
// line length limit. An event is complete only at its blank line, so a
// truncated tail is dropped and reported as ErrTruncated. fn's error stops
// the read and is returned.
func ReadFrames(r io.Reader, fn func(Frame) error) error { return readFrames(r, true, fn) }

// ScanFrames is ReadFrames for a caller that only looks at each frame: its
// Data is valid until fn returns (one buffer serves every frame).
func ScanFrames(r io.Reader, fn func(Frame) error) error { return readFrames(r, false, fn) }

func readFrames(r io.Reader, own bool, fn func(Frame) error) error {
	lr := &lineReader{r: r, buf: make([]byte, 64<<10)}
	var (
		name    string
		data    []byte // handed to fn, so a new one for each event
		hasData bool
		pending bool // any field seen since the last dispatch
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
				if err := fn(Frame{Name: name, Data: data}); err != nil {
					return err
				}
			}
			name, hasData, pending = "", false, false
			if own {
				data = nil
			}
			continue
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
			case hasData:
				data = append(append(data, '\n'), value...)
			case own:
				data = append([]byte{}, value...) // most events have one line
			default:
				data = append(data[:0], value...)
			}
			hasData = true
		}
	}
}

// lineReader splits a stream into lines ended by LF, CRLF or CR, with no
// length limit and linear cost however long a line is.
type lineReader struct {
	r          io.Reader
	buf        []byte
	start, end int
	scanned    int // bytes after start known to hold no line end
	skipLF     bool
	err        error
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
		if i := lineEnd(l.buf[l.start+l.scanned : l.end]); i >= 0 {
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
		if l.start > 0 {
			copy(l.buf, l.buf[l.start:l.end])
			l.end -= l.start
			l.start = 0
		}
		if l.end == len(l.buf) {
			l.buf = append(l.buf, make([]byte, len(l.buf)+64<<10)...)
		}
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		if err != nil {
			l.err = err
		}
	}
}

// lineEnd is the index of the first CR or LF of b, or -1.
func lineEnd(b []byte) int {
	n := bytes.IndexByte(b, '\n')
	if n < 0 {
		n = len(b)
	}
	if r := bytes.IndexByte(b[:n], '\r'); r >= 0 {
		return r
	}
	if n == len(b) {
		return -1
	}
	return n
}
