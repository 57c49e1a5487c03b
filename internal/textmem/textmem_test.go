package textmem

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// kinds are the arenas under test; mapped ones only where they hand out
// memory.
func kinds() map[string]func() *Arena {
	k := map[string]func() *Arena{"heap": New}
	if supported {
		k["mapped"] = func() *Arena { return NewMapped(1 << 30) }
	}
	return k
}

func TestBytesAreDistinctAndZeroed(t *testing.T) {
	for name, newArena := range kinds() {
		t.Run(name, func(t *testing.T) {
			a := newArena()
			type piece struct {
				b    []byte
				fill byte
			}
			var got []piece
			for i, n := range []int{1, 100, 4096, a.maxText, 7, a.maxText, 3, heapChunk / 3, heapChunk / 5} {
				if n > a.maxText {
					continue
				}
				b := a.Bytes(n)
				if len(b) != n || cap(b) != n {
					t.Fatalf("Bytes(%d): len %d cap %d", n, len(b), cap(b))
				}
				if !bytes.Equal(b, make([]byte, n)) {
					t.Fatalf("Bytes(%d) is not zeroed", n)
				}
				for j := range b {
					b[j] = byte(i + 1)
				}
				got = append(got, piece{b, byte(i + 1)})
			}
			for i, p := range got { // no piece wrote over another
				if bytes.Count(p.b, []byte{p.fill}) != len(p.b) {
					t.Fatalf("piece %d was overwritten", i)
				}
			}
			for _, n := range []int{0, -1, a.maxText + 1} {
				if b := a.Bytes(n); b != nil {
					t.Errorf("Bytes(%d) = %d bytes, want nil", n, len(b))
				}
			}
			a.Close()
			if a.Bytes(1) != nil {
				t.Error("a closed arena still hands out memory")
			}
		})
	}
	var nilArena *Arena
	if nilArena.Bytes(1) != nil {
		t.Error("a nil arena hands out memory")
	}
}

func TestConcurrentBytes(t *testing.T) {
	for name, newArena := range kinds() {
		t.Run(name, func(t *testing.T) {
			a := newArena()
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 500 {
						b := a.Bytes(100 + 37*i)
						for j := range b {
							b[j] = byte(w)
						}
						if bytes.Count(b, []byte{byte(w)}) != len(b) {
							t.Errorf("worker %d: its bytes changed under it", w)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}

// TestHeapChunksAreCollected: a heap arena's chunks are ordinary memory:
// once nothing refers to the texts carved from them, the collector takes
// them back.
func TestHeapChunksAreCollected(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	n := func() int {
		a := New()
		var texts []string
		for range 256 {
			b := a.Bytes(heapMaxText)
			texts = append(texts, unsafe.String(unsafe.SliceData(b), len(b)))
		}
		if a.Allocated() != 64*heapChunk {
			t.Errorf("256 texts of a quarter chunk took %d bytes of chunks, want %d", a.Allocated(), 64*heapChunk)
		}
		return len(texts)
	}()
	if n != 256 {
		t.Fatal("no texts")
	}
	if after := heap(); after > before+8<<20 {
		t.Errorf("64 MiB of dropped texts: heap %d MB after, %d MB before", after>>20, before>>20)
	}
}

func TestMappedLimit(t *testing.T) {
	if !supported {
		if NewMapped(1<<30).Bytes(10) != nil {
			t.Fatal("off Linux a mapped arena hands out nothing")
		}
		return
	}
	a := NewMapped(2 * mappedChunk)
	for a.Bytes(MaxText) != nil {
	}
	if got := a.Allocated(); got != 2*mappedChunk {
		t.Errorf("mapped %d at the limit, want %d", got, 2*mappedChunk)
	}
	if a.Bytes(1) != nil {
		t.Error("an arena at its limit still hands out memory")
	}
}

// TestMappedChunksAskForHugePages: the kernel sees the advice on the
// mapping (smaps' THPeligible and the hg flag), where transparent huge
// pages are not turned off.
func TestMappedChunksAskForHugePages(t *testing.T) {
	if !supported {
		t.Skip("Linux only")
	}
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skip("transparent huge pages are off here")
	}
	b := NewMapped(1 << 30).Bytes(64)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	entry := mappingOf(smaps, start)
	if entry == nil {
		t.Fatalf("no mapping holds %#x", start)
	}
	eligible, flags := false, false
	for _, l := range strings.Split(string(entry), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[0] == "THPeligible:":
			eligible = f[1] == "1"
		case len(f) > 0 && f[0] == "VmFlags:":
			flags = slices.Contains(f[1:], "hg")
		}
	}
	if !eligible || !flags {
		t.Errorf("the chunk does not ask for huge pages:\n%s", entry)
	}
}

// mappingOf is the smaps entry of the mapping that holds addr, or nil.
func mappingOf(smaps []byte, addr uintptr) []byte {
	var entry []byte
	for _, l := range bytes.SplitAfter(smaps, []byte("\n")) {
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(string(l), "%x-%x ", &lo, &hi); n == 2 {
			if entry != nil {
				return entry
			}
			if lo <= addr && addr < hi {
				entry = append([]byte{}, l...)
			}
			continue
		}
		if entry != nil {
			entry = append(entry, l...)
		}
	}
	return entry
}
