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
