package events

import (
	"errors"
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
