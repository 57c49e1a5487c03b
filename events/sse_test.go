package events

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadFrames(t *testing.T) {
	cases := []struct {
		name, in string
		want     []Frame
		err      error
	}{
		{"basic", "event: maria\ndata: {}\n\n", []Frame{{"maria", []byte("{}")}}, nil},
		{"crlf", "event: maria\r\ndata: {}\r\n\r\n", []Frame{{"maria", []byte("{}")}}, nil},
		{"cr", "event: maria\rdata: {}\r\r", []Frame{{"maria", []byte("{}")}}, nil},
		{"bom", "\xef\xbb\xbfevent: a\ndata: 1\n\n", []Frame{{"a", []byte("1")}}, nil},
		{"multi data + comments + id", ": hi\nid: 7\nretry: 5\nevent: a\ndata: x\ndata:y\n\n", []Frame{{"a", []byte("x\ny")}}, nil},
		{"no data no dispatch", "event: a\n\nevent: b\ndata: 2\n\n", []Frame{{"b", []byte("2")}}, nil},
		{"truncated tail dropped", "event: a\ndata: 1\n\nevent: b\ndata: {\"x\":", []Frame{{"a", []byte("1")}}, ErrTruncated},
		{"tail without blank line dropped", "event: a\ndata: 1\n\nevent: b\ndata: 2\n", []Frame{{"a", []byte("1")}}, ErrTruncated},
		{"long line", "data: " + strings.Repeat("x", 300000) + "\n\n", []Frame{{"", []byte(strings.Repeat("x", 300000))}}, nil},
	}
	for _, c := range cases {
		for _, mode := range []string{"whole", "onebyte"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				var r io.Reader = strings.NewReader(c.in)
				if mode == "onebyte" {
					r = iotest.OneByteReader(r)
				}
				var got []Frame
				err := ReadFrames(r, func(f Frame) error { got = append(got, f); return nil })
				if !errors.Is(err, c.err) && !(err == nil && c.err == nil) {
					t.Fatalf("err %v, want %v", err, c.err)
				}
				if len(got) != len(c.want) {
					t.Fatalf("got %d frames, want %d", len(got), len(c.want))
				}
				for i := range got {
					if got[i].Name != c.want[i].Name || string(got[i].Data) != string(c.want[i].Data) {
						t.Fatalf("frame %d = %q %q", i, got[i].Name, Excerpt(got[i].Data, 40))
					}
				}
			})
		}
	}
}

// referenceReadFrames is ReadFrames as first written (a bytes.Buffer per
// stream, IndexAny for line ends), kept to check the faster one against.
func referenceReadFrames(r io.Reader, fn func(Frame) error) error {
	lr := &refLineReader{r: r, buf: make([]byte, 64<<10)}
	var (
		name    string
		data    bytes.Buffer
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
				if err := fn(Frame{Name: name, Data: bytes.Clone(data.Bytes())}); err != nil {
					return err
				}
			}
			name, hasData, pending = "", false, false
			data.Reset()
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
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		}
	}
}

// refLineReader splits a stream into lines ended by LF, CRLF or CR, with no
// length limit and linear cost however long a line is.
type refLineReader struct {
	r          io.Reader
	buf        []byte
	start, end int
	scanned    int // bytes after start known to hold no line end
	skipLF     bool
	err        error
}

// line returns the next line without its end; it is valid until the next
// call. A last line without a line end comes back with the read error.
func (l *refLineReader) line() ([]byte, error) {
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

func FuzzReadFramesAgainstReference(f *testing.F) {
	f.Add([]byte("event: a\ndata: 1\n\n"), uint8(3))
	f.Add([]byte("data: x\r\ndata: y\r\r\n\n: c\n"), uint8(1))
	f.Add([]byte("\xef\xbb\xbfdata\n\ndata:\n\nevent: e\ndata: a\ndata\ndata: b\n\ndata: cut"), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		type got struct {
			frames []Frame
			err    error
		}
		read := func(rf func(io.Reader, func(Frame) error) error) got {
			var g got
			r := io.Reader(bytes.NewReader(in))
			if chunk%4 == 1 {
				r = iotest.OneByteReader(r)
			} else if chunk%4 == 2 {
				r = iotest.HalfReader(r)
			}
			g.err = rf(r, func(fr Frame) error {
				g.frames = append(g.frames, fr)
				return nil
			})
			return g
		}
		scan := func(r io.Reader, fn func(Frame) error) error {
			return ScanFrames(r, func(fr Frame) error { return fn(Frame{Name: fr.Name, Data: append([]byte{}, fr.Data...)}) })
		}
		a, b := read(ReadFrames), read(referenceReadFrames)
		if chunk&4 != 0 {
			a = read(scan) // ScanFrames, its data copied before the next frame
		}
		if !errors.Is(a.err, b.err) && (a.err == nil || b.err == nil || a.err.Error() != b.err.Error()) {
			t.Fatalf("error %v, reference %v", a.err, b.err)
		}
		if len(a.frames) != len(b.frames) {
			t.Fatalf("%d frames, reference %d", len(a.frames), len(b.frames))
		}
		for i := range a.frames {
			x, y := a.frames[i], b.frames[i]
			if x.Name != y.Name || !bytes.Equal(x.Data, y.Data) { // nil or empty: no one tells them apart
				t.Fatalf("frame %d: %q %q, reference %q %q", i, x.Name, x.Data, y.Name, y.Data)
			}
		}
	})
}
