package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/perch-tui/perch/events"
)

func TestReadFrames(t *testing.T) {
	cases := []struct {
		name, in string
		want     []events.Frame
		err      error
	}{
		{"basic", "event: maria\ndata: {}\n\n", []events.Frame{{Name: "maria", Data: []byte("{}")}}, nil},
		{"crlf", "event: maria\r\ndata: {}\r\n\r\n", []events.Frame{{Name: "maria", Data: []byte("{}")}}, nil},
		{"cr", "event: maria\rdata: {}\r\r", []events.Frame{{Name: "maria", Data: []byte("{}")}}, nil},
		{"bom", "\xef\xbb\xbfevent: a\ndata: 1\n\n", []events.Frame{{Name: "a", Data: []byte("1")}}, nil},
		{"multi data + comments + id", ": hi\nid: 7\nretry: 5\nevent: a\ndata: x\ndata:y\n\n", []events.Frame{{Name: "a", Data: []byte("x\ny")}}, nil},
		{"no data no dispatch", "event: a\n\nevent: b\ndata: 2\n\n", []events.Frame{{Name: "b", Data: []byte("2")}}, nil},
		{"truncated tail dropped", "event: a\ndata: 1\n\nevent: b\ndata: {\"x\":", []events.Frame{{Name: "a", Data: []byte("1")}}, ErrTruncated},
		{"tail without blank line dropped", "event: a\ndata: 1\n\nevent: b\ndata: 2\n", []events.Frame{{Name: "a", Data: []byte("1")}}, ErrTruncated},
		{"long line", "data: " + strings.Repeat("x", 300000) + "\n\n", []events.Frame{{Name: "", Data: []byte(strings.Repeat("x", 300000))}}, nil},
	}
	for _, c := range cases {
		for _, mode := range []string{"whole", "onebyte"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				var r io.Reader = strings.NewReader(c.in)
				if mode == "onebyte" {
					r = iotest.OneByteReader(r)
				}
				var got []events.Frame
				err := ReadFrames(r, func(f events.Frame) error { got = append(got, f); return nil })
				if !errors.Is(err, c.err) && !(err == nil && c.err == nil) {
					t.Fatalf("err %v, want %v", err, c.err)
				}
				if len(got) != len(c.want) {
					t.Fatalf("got %d frames, want %d", len(got), len(c.want))
				}
				for i := range got {
					if got[i].Name != c.want[i].Name || string(got[i].Data) != string(c.want[i].Data) {
						t.Fatalf("frame %d = %q %q", i, got[i].Name, events.Excerpt(got[i].Data, 40))
					}
				}
			})
		}
	}
}

// TestReadFramesLargeEvents: a large data line reaches its frame whole and
// the stream goes on past it; several data lines are joined; an event past
// MaxEventBytes stops the read with ErrEventTooLarge.
func TestReadFramesLargeEvents(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 3<<20/16) // 3 MiB
	in := "event: maria\ndata: " + big + "\r\n\r\nevent: b\ndata: " + big + "\ndata: x\n\n: c\ndata: small\n\n"
	for _, chunk := range []int{1 << 30, 7, 64 << 10} {
		var got []events.Frame
		err := ReadFrames(&chunkReader{s: in, n: chunk}, func(f events.Frame) error {
			got = append(got, f)
			return nil
		})
		if err != nil || len(got) != 3 {
			t.Fatalf("chunk %d: err %v, %d frames", chunk, err, len(got))
		}
		if got[0].Name != "maria" || string(got[0].Data) != big || got[1].Name != "b" || string(got[1].Data) != big+"\nx" || string(got[2].Data) != "small" {
			t.Fatalf("chunk %d: frames differ", chunk)
		}
		// Each frame owns its data: writing to one touches no other.
		got[0].Data[0] = 'X'
		if got[1].Data[0] != '0' {
			t.Fatalf("frames share memory")
		}
	}
	over := io.MultiReader(strings.NewReader("data: "), &repeatReader{n: MaxEventBytes + 1})
	if err := ReadFrames(over, func(events.Frame) error { return nil }); err != ErrEventTooLarge {
		t.Fatalf("a line past the limit: err %v", err)
	}
	lines := strings.Repeat("data: "+strings.Repeat("y", 1<<20)+"\n", MaxEventBytes>>20+1) + "\n"
	n := 0
	if err := ReadFrames(strings.NewReader(lines), func(events.Frame) error { n++; return nil }); err != ErrEventTooLarge || n != 0 {
		t.Fatalf("lines past the limit: err %v, %d frames", err, n)
	}
}

// chunkReader reads s n bytes at a time.
type chunkReader struct {
	s string
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.s)
	r.s = r.s[k:]
	return k, nil
}

// repeatReader yields n bytes of 'z'.
type repeatReader struct{ n int }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'z'
	}
	r.n -= k
	return k, nil
}
