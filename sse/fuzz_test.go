package sse

import (
	"bytes"
	"errors"
	"testing"
	"testing/iotest"

	"github.com/perch-tui/perch/events"
)

// FuzzReadFrames: any input reads without panicking, and the same frames
// and verdict come out whether it is read as a file (whole reads) or as a
// live stream one byte at a time (where reads are cut must never change
// what is framed).
func FuzzReadFrames(f *testing.F) {
	for _, s := range []string{
		"event: maria\ndata: {}\n\n",
		"data: a\r\n\r\ndata: b\r\n",
		"data: a\r\rdata: b\r\r",
		"\xef\xbb\xbfevent: a\ndata: 1\n\n: c\n\nid: 7\nretry: 5\ndata\n\n",
		"data: a\n\ndata: b\n\r\ndata: c\r\r\ndata: d\n\r",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var whole, onebyte []events.Frame
		errW := ReadFrames(bytes.NewReader(in), func(fr events.Frame) error { whole = append(whole, fr); return nil })
		// As a live stream reads it: one byte per read, nothing filled.
		errO := readEvents(iotest.OneByteReader(bytes.NewReader(in)), MaxEventBytes, false, false, &Activity{}, func(e *event) error {
			if e.data != nil {
				onebyte = append(onebyte, events.Frame{Name: e.name, Data: e.data})
			}
			return nil
		})
		// Borrowed (Config.Borrow), in reads of a few bytes: the data
		// is right while fn runs, and fn copies what it keeps.
		var borrowed []events.Frame
		errB := readEvents(iotest.HalfReader(bytes.NewReader(in)), MaxEventBytes, false, true, &Activity{}, func(e *event) error {
			if e.data != nil {
				borrowed = append(borrowed, events.Frame{Name: e.name, Data: bytes.Clone(e.data)})
			}
			return nil
		})
		if errors.Is(errW, ErrTruncated) != errors.Is(errB, ErrTruncated) || len(whole) != len(borrowed) {
			t.Fatalf("whole: %d frames, %v; borrowed: %d frames, %v", len(whole), errW, len(borrowed), errB)
		}
		for i := range whole {
			if whole[i].Name != borrowed[i].Name || !bytes.Equal(whole[i].Data, borrowed[i].Data) || (whole[i].Data == nil) != (borrowed[i].Data == nil) {
				t.Fatalf("frame %d: whole %q %q, borrowed %q %q", i, whole[i].Name, whole[i].Data, borrowed[i].Name, borrowed[i].Data)
			}
		}
		if errors.Is(errW, ErrTruncated) != errors.Is(errO, ErrTruncated) || len(whole) != len(onebyte) {
			t.Fatalf("whole: %d frames, %v; one byte at a time: %d frames, %v", len(whole), errW, len(onebyte), errO)
		}
		for i := range whole {
			if whole[i].Name != onebyte[i].Name || !bytes.Equal(whole[i].Data, onebyte[i].Data) {
				t.Fatalf("frame %d differs: %q %q vs %q %q", i, whole[i].Name, whole[i].Data, onebyte[i].Name, onebyte[i].Data)
			}
		}
	})
}
