package events

import (
	"cmp"
	"slices"
)

// idSet is the set of envelope ids a MariaDecoder has seen, kept compact:
// a long session holds one id per event for as long as the stream lasts
// (10,000 for the 48 MB long session). A map of strings held each id's
// string (48 bytes for a UUID, often kept by nothing else) and a slot of
// the map's table; the ids maria sends are UUIDs (HEAD) or integers (the
// docs dialect), so they are kept as 16-byte numbers in a sorted slice,
// with the most recent ones in a small map until they are merged in.
// Any other id is kept as its string.
type idSet struct {
	uuids, ints keySet
	other       map[string]struct{}
}

// add records id and reports whether it was new.
func (s *idSet) add(id string) bool {
	if k, ok := uuidKey(id); ok {
		return s.uuids.add(k)
	}
	if k, ok := intKey(id); ok {
		return s.ints.add(k)
	}
	if _, dup := s.other[id]; dup {
		return false
	}
	if s.other == nil {
		s.other = make(map[string]struct{})
	}
	s.other[id] = struct{}{}
	return true
}

// has reports whether id was added.
func (s *idSet) has(id string) bool {
	if k, ok := uuidKey(id); ok {
		return s.uuids.has(k)
	}
	if k, ok := intKey(id); ok {
		return s.ints.has(k)
	}
	_, ok := s.other[id]
	return ok
}

// key128 is an id as a 128-bit number.
type key128 struct{ hi, lo uint64 }

func (a key128) cmp(b key128) int {
	if c := cmp.Compare(a.hi, b.hi); c != 0 {
		return c
	}
	return cmp.Compare(a.lo, b.lo)
}

// keySet is a set of key128: sorted holds most of them, ascending; recent
// the last added, merged into sorted once it holds an eighth as many (so
// each key is moved a bounded number of times on average, and the map
// stays small).
type keySet struct {
	sorted []key128
	recent map[key128]struct{}
}

// mergeMin is the fewest recent keys a merge waits for.
const mergeMin = 64

func (s *keySet) has(k key128) bool {
	// A binary search for the first key not below k.
	lo, hi := 0, len(s.sorted)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if e := s.sorted[m]; e.hi < k.hi || e.hi == k.hi && e.lo < k.lo {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(s.sorted) && s.sorted[lo] == k {
		return true
	}
	_, ok := s.recent[k]
	return ok
}

func (s *keySet) add(k key128) bool {
	if s.has(k) {
		return false
	}
	if s.recent == nil {
		s.recent = make(map[key128]struct{})
	}
	s.recent[k] = struct{}{}
	if n := len(s.recent); n >= mergeMin && n >= len(s.sorted)/8 {
		s.merge()
	}
	return true
}

// merge moves the recent keys into sorted.
func (s *keySet) merge() {
	add := make([]key128, 0, len(s.recent))
	for k := range s.recent {
		add = append(add, k)
	}
	slices.SortFunc(add, key128.cmp)
	clear(s.recent)
	// Merge from the back, in place: sorted grows by len(add).
	i, j := len(s.sorted)-1, len(add)-1
	s.sorted = slices.Grow(s.sorted, len(add))[:len(s.sorted)+len(add)]
	for w := len(s.sorted) - 1; j >= 0; w-- {
		if i >= 0 && s.sorted[i].cmp(add[j]) > 0 {
			s.sorted[w] = s.sorted[i]
			i--
		} else {
			s.sorted[w] = add[j]
			j--
		}
	}
}

// uuidKey reads id as a UUID in its canonical form, lower-case hex
// (8-4-4-4-12); another spelling of the same UUID is another id, so it is
// left to the string set.
func uuidKey(id string) (key128, bool) {
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
		return key128{}, false
	}
	var k key128
	n := 0
	for i := 0; i < len(id); i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			continue
		}
		v := hexVal[id[i]]
		if v > 15 {
			return key128{}, false
		}
		if n < 16 {
			k.hi = k.hi<<4 | uint64(v)
		} else {
			k.lo = k.lo<<4 | uint64(v)
		}
		n++
	}
	return k, true
}

// hexVal is the value of a lower-case hex digit, 255 for other bytes.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 255
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
	}
	return t
}()

// intKey reads id as a decimal integer in its canonical form (no sign, no
// leading zero), below 10^19.
func intKey(id string) (key128, bool) {
	if len(id) == 0 || len(id) > 19 || len(id) > 1 && id[0] == '0' {
		return key128{}, false
	}
	var n uint64
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c < '0' || c > '9' {
			return key128{}, false
		}
		n = n*10 + uint64(c-'0')
	}
	return key128{lo: n}, true
}
