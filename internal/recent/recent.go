// Package recent is a map that keeps only its latest entries, for what a
// decoder looks up soon after it learns it (a tool call's name, wanted by
// the call's result) and can afford to forget later: a day-long session
// would otherwise hold an entry for every call it ever made.
package recent

// Window is how many of the latest keys a decoder keeps at least: what
// it looks up (a call's name, wanted by the call's result; a turn, by the
// end of its model response) comes within a few hundred keys of being
// learnt, and the timeline of an imported file lets an item go a thousand
// items after it anyway (events.FileSettleLag). Something older than that
// is not found: a result then shows without its call's name.
const Window = 4096

// Map keeps at least the last n keys put (and at most 2n): two
// generations, the current one and the one before it; when the current
// one holds n keys it becomes the old one and the old one is dropped.
// Putting a key again makes it current again.
type Map[V any] struct {
	n        int
	cur, old map[string]V
}

// New is a map that keeps at least the last n keys put.
func New[V any](n int) *Map[V] {
	return &Map[V]{n: max(n, 1)}
}

// Get is the value of k, if k is among the keys kept.
func (m *Map[V]) Get(k string) (V, bool) {
	if v, ok := m.cur[k]; ok {
		return v, true
	}
	v, ok := m.old[k]
	return v, ok
}

// Put sets the value of k.
func (m *Map[V]) Put(k string, v V) {
	if m.cur == nil {
		m.cur = make(map[string]V)
	}
	delete(m.old, k) // one value per key: the current one
	m.cur[k] = v
	if len(m.cur) >= m.n {
		m.old, m.cur = m.cur, make(map[string]V, m.n)
	}
}
