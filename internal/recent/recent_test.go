package recent

import (
	"strconv"
	"testing"
)

// TestKeepsTheLatest: the last n keys put are kept, with their latest
// values; a key put again is kept as if put last; keys put long before
// are forgotten.
func TestKeepsTheLatest(t *testing.T) {
	const n = 100
	m := New[int](n)
	for i := range 10 * n {
		m.Put("k"+strconv.Itoa(i), i)
		m.Put("again", i) // put with every key: always among the latest
	}
	for i := 9 * n; i < 10*n; i++ {
		if v, ok := m.Get("k" + strconv.Itoa(i)); !ok || v != i {
			t.Fatalf("key %d: got %d, %v; want %d, kept", i, v, ok, i)
		}
	}
	if v, ok := m.Get("again"); !ok || v != 10*n-1 {
		t.Fatalf("a key put again: got %d, %v; want its last value %d", v, ok, 10*n-1)
	}
	if _, ok := m.Get("k0"); ok {
		t.Fatal("a key put 1000 keys ago is still kept")
	}
	if len(m.cur)+len(m.old) > 2*n {
		t.Fatalf("%d keys kept, more than 2n = %d", len(m.cur)+len(m.old), 2*n)
	}
}
