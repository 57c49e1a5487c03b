package idset

import (
	"strconv"
	"testing"
)

// TestSeenAcrossTheMerge: ids added long ago (moved to the sorted slice)
// and just now (in the map) are both seen; others are not.
func TestSeenAcrossTheMerge(t *testing.T) {
	var s Set
	const n = 3*recent + 17
	for i := range n {
		if s.Seen("id-" + strconv.Itoa(i)) {
			t.Fatalf("id %d seen before it was added", i)
		}
	}
	for i := range n {
		if !s.Has("id-" + strconv.Itoa(i)) {
			t.Fatalf("id %d not seen after it was added", i)
		}
	}
	if s.Has("id-"+strconv.Itoa(n)) || s.Len() != n {
		t.Fatalf("an id never added is seen, or Len %d != %d", s.Len(), n)
	}
}

// TestAddAll: a set takes in another's ids, old and recent, once each,
// and the other is left as it was.
func TestAddAll(t *testing.T) {
	var a, b Set
	for i := range recent + 10 {
		b.Add("b-" + strconv.Itoa(i))
	}
	a.Add("a")
	a.Add("b-3") // in both
	a.AddAll(&b)
	for i := range recent + 10 {
		if !a.Has("b-" + strconv.Itoa(i)) {
			t.Fatalf("b-%d missing after AddAll", i)
		}
	}
	if !a.Has("a") || a.Has("c") || a.Len() != recent+11 {
		t.Fatalf("after AddAll: Has(a) %v, Has(c) %v, Len %d, want true, false, %d", a.Has("a"), a.Has("c"), a.Len(), recent+11)
	}
	if b.Has("a") || b.Len() != recent+10 {
		t.Fatalf("AddAll changed its argument: Len %d", b.Len())
	}
}
