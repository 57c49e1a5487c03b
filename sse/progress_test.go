package sse

import (
	"testing"
	"time"
)

// TestProgressQuiet: quiet counts from the last byte read, and is none
// while an event is partly received or before any byte.
func TestProgressQuiet(t *testing.T) {
	p := &Progress{}
	s := &streamSide{report: p}
	if q := p.Quiet(); q != 0 {
		t.Fatalf("quiet %v before any byte", q)
	}
	s.receiving(false, 10, 1)
	time.Sleep(20 * time.Millisecond)
	if q := p.Quiet(); q < 20*time.Millisecond || q > 10*time.Second {
		t.Fatalf("quiet %v, 20 ms after the last byte", q)
	}
	s.receiving(true, 0, 0) // a read that found half an event, no new byte
	if q := p.Quiet(); q != 0 {
		t.Fatalf("quiet %v while an event is partly received", q)
	}
}
