package suna

import (
	"math/rand/v2"
	"slices"
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
		{"9223372036854775808-0", true}, // past 2^63 ms: kept as text
		{"9223372036854775808-0", false},
		{"9223372036854775807-18446744073709551615", true},
		{"9223372036854775807-18446744073709551615", false},
		{"0-0", true},
		{"1700000000000-1", false},
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
	if d2.events.Len() != 0 || d2.ids.len() != 1000 {
		t.Fatalf("%d ids as text, %d as numbers", d2.events.Len(), d2.ids.len())
	}
}

// The compact set of Redis ids answers as a plain set would, for ids in
// order, in reverse, shuffled and repeated, across many blocks.
func TestRedisIDsLikeAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 40 {
		var s redisIDs
		want := map[redisID]bool{}
		var pool []redisID
		ms := uint64(rng.IntN(1 << 20))
		for range 1 + rng.IntN(2000) {
			switch rng.IntN(20) {
			case 0:
				ms += rng.Uint64N(1 << 40)
			case 1, 2, 3, 4, 5:
			default:
				ms += uint64(rng.IntN(300))
			}
			seq := uint64(rng.IntN(4))
			if rng.IntN(50) == 0 {
				seq = rng.Uint64()
			}
			pool = append(pool, redisID{ms, seq})
		}
		switch round % 4 {
		case 1:
			slices.Reverse(pool)
		case 2:
			rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		case 3: // in order, then a replay of the whole again, then new
			pool = append(pool, pool...)
			pool = append(pool, redisID{ms + 1, 0}, redisID{ms + 1, 1<<63 + 5}, redisID{1<<63 - 1, 1<<64 - 1})
		}
		for k, id := range pool {
			if got := s.add(id); got != !want[id] {
				t.Fatalf("round %d, id %d (%v): add = %v, want %v", round, k, id, got, !want[id])
			}
			want[id] = true
		}
		if s.len() != len(want) {
			t.Fatalf("round %d: len %d, want %d", round, s.len(), len(want))
		}
		for id := range want {
			if s.add(id) {
				t.Fatalf("round %d: %v forgotten", round, id)
			}
		}
	}
}
