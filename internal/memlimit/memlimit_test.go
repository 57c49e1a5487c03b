package memlimit

import (
	"math"
	"runtime/debug"
	"sync/atomic"
	"testing"
)

// The limit follows the bytes read, is never below the live heap plus the
// floor, moves only every Step, and Relax puts the process's back.
func TestBoundFollowsTheStream(t *testing.T) {
	orig := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(orig)
	var n atomic.Int64
	b := Start(n.Load, math.MaxInt64)
	floor := Current()
	if floor >= math.MaxInt64 || floor < Floor {
		t.Fatalf("limit at start %d: want the live heap plus %d", floor, Floor)
	}
	n.Store(floor + 100<<20)
	b.Update()
	if got, want := Current(), n.Load()+Slack; got != want {
		t.Fatalf("limit after %d bytes = %d, want %d", n.Load(), got, want)
	}
	n.Add(Step / 2)
	b.Update()
	if got, want := Current(), n.Load()-Step/2+Slack; got != want {
		t.Fatalf("limit moved within a step: %d, want %d", got, want)
	}
	b.Relax()
	if got := Current(); got != math.MaxInt64 {
		t.Fatalf("after Relax the limit is %d, want none", got)
	}
	b.Update() // applies again
	if got, want := Current(), n.Load()+Slack; got != want {
		t.Fatalf("limit after Relax and Update = %d, want %d", got, want)
	}
	b.Relax()
}

// A process limit lower than the bound's is kept.
func TestBoundKeepsALowerLimit(t *testing.T) {
	orig := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(orig)
	var n atomic.Int64
	n.Store(1 << 40)
	b := Start(n.Load, 50<<20)
	if got := Current(); got != 50<<20 {
		t.Fatalf("limit %d, want the process's 50 MiB", got)
	}
	b.Relax()
	if got := Current(); got != 50<<20 {
		t.Fatalf("after Relax %d, want 50 MiB", got)
	}
}
