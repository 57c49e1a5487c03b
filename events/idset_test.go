package events

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
)

func TestIDKeys(t *testing.T) {
	for _, c := range []struct {
		id         string
		uuid, nums bool
	}{
		{"a61f28b1-8d84-46a7-8f0a-f0e7cd13c2f2", true, false},
		{"00000000-0000-0000-0000-000000000000", true, false},
		{"ffffffff-ffff-ffff-ffff-ffffffffffff", true, false},
		{"A61F28B1-8D84-46A7-8F0A-F0E7CD13C2F2", false, false}, // another spelling: a string
		{"a61f28b1-8d84-46a7-8f0a-f0e7cd13c2f", false, false},
		{"a61f28b18d84-46a7-8f0a-f0e7cd13c2f2-", false, false},
		{"a61f28b1-8d84-46a7-8f0a-f0e7cd13c2g2", false, false},
		{"0", false, true},
		{"12", false, true},
		{"9999999999999999999", false, true},
		{"10000000000000000000", false, false}, // 20 digits
		{"012", false, false},
		{"-1", false, false},
		{"1.5", false, false},
		{"1e3", false, false},
		{"", false, false},
		{"reply-1f", false, false},
	} {
		if _, ok := uuidKey(c.id); ok != c.uuid {
			t.Errorf("uuidKey(%q) ok = %v, want %v", c.id, ok, c.uuid)
		}
		if _, ok := intKey(c.id); ok != c.nums {
			t.Errorf("intKey(%q) ok = %v, want %v", c.id, ok, c.nums)
		}
	}
	a, _ := uuidKey("a61f28b1-8d84-46a7-8f0a-f0e7cd13c2f2")
	if a != (key128{0xa61f28b18d8446a7, 0x8f0af0e7cd13c2f2}) {
		t.Errorf("uuidKey = %x", a)
	}
	if n, _ := intKey("9999999999999999999"); n.lo != 9999999999999999999 {
		t.Errorf("intKey = %d", n.lo)
	}
}

// TestIDSet holds the set to a map of strings: ids of every kind, repeated
// at random, across many merges.
func TestIDSet(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pool := make([]string, 0, 6000)
	for i := range 3000 {
		pool = append(pool, fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&(1<<48-1)))
		if i%3 == 0 {
			pool = append(pool, strings4(pool[len(pool)-1]))
		}
		pool = append(pool, strconv.FormatUint(r.Uint64N(1e6), 10), "0"+strconv.Itoa(i), "id-"+strconv.Itoa(i%500))
	}
	var s idSet
	want := map[string]bool{}
	for range 30000 {
		id := pool[r.IntN(len(pool))]
		if got := s.add(id); got != !want[id] {
			t.Fatalf("add(%q) = %v, seen before: %v", id, got, want[id])
		}
		want[id] = true
	}
	for _, id := range pool {
		if s.has(id) != want[id] {
			t.Fatalf("has(%q) = %v, want %v", id, s.has(id), want[id])
		}
	}
	for _, ks := range []keySet{s.uuids, s.ints} {
		for i := 1; i < len(ks.sorted); i++ {
			if ks.sorted[i-1].cmp(ks.sorted[i]) >= 0 {
				t.Fatalf("sorted keys out of order at %d", i)
			}
		}
	}
}

// strings4 is a UUID in upper case: the same number, another id.
func strings4(id string) string {
	b := []byte(id)
	for i, c := range b {
		if 'a' <= c && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// TestIDSetSize: 10,000 UUIDs (a long session's envelope ids) take about
// 16 bytes each, and none of their strings is kept.
func TestIDSetSize(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := rand.New(rand.NewPCG(3, 4))
	ids := make([]string, 10_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("%016x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&(1<<48-1))[8:]
	}
	s := &idSet{}
	for _, id := range ids {
		if !s.add(id) {
			t.Fatalf("add(%q): a new id seen", id)
		}
	}
	ids = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	// 160 KB of keys, room to grow, the recent keys' map (235 KB in
	// all); a map of the strings took 880 KB.
	if grew > 320<<10 {
		t.Errorf("10,000 ids take %d bytes", grew)
	}
	runtime.KeepAlive(s)
}
