package suna

import (
	"strconv"
	"testing"
)

// seenID drops an _event_id met before, whatever the order the ids come
// in; ids equal as numbers but not as text are different ids.
func TestSeenEventIDs(t *testing.T) {
	d := NewDecoder()
	d.init()
	steps := []struct {
		id   string // the _event_id
		want bool   // new
	}{
		{"1700000000000-0", true},
		{"1700000000000-1", true},
		{"1700000000000-1", false},
		{"1700000000000-0", false}, // an older one again
		{"1699999999999-5", true},  // older, never seen
		{"1699999999999-5", false},
		{"1700000000001-0", true},
		{"01700000000001-0", true}, // not Redis's writing: another id
		{"01700000000001-0", false},
		{"abc", true},
		{"abc", false},
		{"18446744073709551615-0", true}, // 20 digits: kept as text
		{"18446744073709551615-0", false},
	}
	for i, s := range steps {
		if got := d.seenID(s.id); got != s.want {
			t.Fatalf("step %d: seenID(%s) = %v, want %v", i, s.id, got, s.want)
		}
	}
	// Many ids in order, then all again: every one a duplicate.
	d2 := NewDecoder()
	d2.init()
	for i := range 1000 {
		if !d2.seenID("5-" + strconv.Itoa(i)) {
			t.Fatalf("5-%d new, not seen", i)
		}
	}
	for i := 999; i >= 0; i-- {
		if d2.seenID("5-" + strconv.Itoa(i)) {
			t.Fatalf("5-%d again taken as new", i)
		}
	}
	if d2.events.Len() != 0 || len(d2.ids) != 1000 {
		t.Fatalf("%d ids as text, %d as numbers", d2.events.Len(), len(d2.ids))
	}
}
