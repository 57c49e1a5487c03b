// Package idset is a set of the ids a decoder has seen, in the memory a
// day-long session can afford: a 64-bit hash of each id, not the id, the
// latest few thousand in a map and the older ones in a sorted slice (8
// bytes an id, a third of a map's). Two ids of one session sharing a hash
// (about 1 in 10^9 at a million ids) would make the second look seen.
package idset

import (
	"hash/maphash"
	"slices"
)

// recent is how many hashes the map holds before they move to the sorted
// slice.
const recent = 4096

// seed is the process's one hash seed: every set hashes alike, so that
// one set can take in another's hashes (AddAll). It is never changed.
var seed = maphash.MakeSeed()

// Set is a set of ids. The zero value is an empty set.
type Set struct {
	recent map[uint64]struct{}
	sorted []uint64
}

func (s *Set) hash(id string) uint64 { return maphash.String(seed, id) }

// Has reports whether id was added.
func (s *Set) Has(id string) bool { return s.has(s.hash(id)) }

func (s *Set) has(h uint64) bool {
	if _, ok := s.recent[h]; ok {
		return true
	}
	_, ok := slices.BinarySearch(s.sorted, h)
	return ok
}

// Add adds id.
func (s *Set) Add(id string) { s.Seen(id) }

// AddAll adds every id of o.
func (s *Set) AddAll(o *Set) {
	for h := range o.recent {
		if !s.has(h) {
			s.addHash(h)
		}
	}
	for _, h := range o.sorted {
		if !s.has(h) {
			s.addHash(h)
		}
	}
}

// Seen reports whether id was added before, and adds it.
func (s *Set) Seen(id string) bool {
	h := s.hash(id)
	if s.has(h) {
		return true
	}
	s.addHash(h)
	return false
}

// addHash adds h, which the set does not hold.
func (s *Set) addHash(h uint64) {
	if s.recent == nil {
		s.recent = make(map[uint64]struct{})
	}
	s.recent[h] = struct{}{}
	if len(s.recent) >= recent {
		s.sorted = merge(s.sorted, s.recent)
		clear(s.recent)
	}
}

// Len is how many ids were added.
func (s *Set) Len() int { return len(s.recent) + len(s.sorted) }

// merge adds the keys of m to the sorted slice s, in place from its end:
// linear in len(s), no second slice.
func merge(s []uint64, m map[uint64]struct{}) []uint64 {
	add := make([]uint64, 0, len(m))
	for k := range m {
		add = append(add, k)
	}
	slices.Sort(add)
	i, j := len(s)-1, len(add)-1
	s = append(s, add...) // room for the merge; the tail is overwritten
	for k := len(s) - 1; j >= 0; k-- {
		if i >= 0 && s[i] > add[j] {
			s[k] = s[i]
			i--
		} else {
			s[k] = add[j]
			j--
		}
	}
	return s
}
