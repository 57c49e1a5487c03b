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

func TestBytesAreDistinctAndBounded(t *testing.T) {
	if runtime.GOOS != "linux" {
		a := New(1 << 30)
		if b := a.Bytes(10); b != nil {
			t.Fatalf("off Linux the arena hands out nothing, got %d bytes", len(b))
		}
		return
	}
	a := New(2 * chunkSize)
	var got [][]byte
	for _, n := range []int{1, 100, 4096, MaxText, 7} {
		b := a.Bytes(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("Bytes(%d): len %d cap %d", n, len(b), cap(b))
		}
		if !bytes.Equal(b, make([]byte, n)) {
			t.Fatalf("Bytes(%d) is not zeroed", n)
		}
		for i := range b {
			b[i] = byte(len(got) + 1)
		}
		got = append(got, b)
	}
	for i, b := range got { // no slice wrote over another
		if bytes.Count(b, []byte{byte(i + 1)}) != len(b) {
			t.Fatalf("slice %d was overwritten", i)
		}
	}
	for _, n := range []int{0, -1, MaxText + 1} {
		if b := a.Bytes(n); b != nil {
			t.Errorf("Bytes(%d) = %d bytes, want nil", n, len(b))
		}
	}
	// The limit: two chunks, then nothing.
	for a.Bytes(MaxText) != nil {
	}
	if m := a.Mapped(); m != 2*chunkSize {
		t.Errorf("mapped %d at the limit, want %d", m, 2*chunkSize)
	}
	a.Close()
	if b := New(1 << 30); b.Bytes(1) == nil {
		t.Error("a new arena hands out nothing")
	} else {
		b.Close()
		if b.Bytes(1) != nil {
			t.Error("a closed arena still hands out memory")
		}
	}
	var nilArena *Arena
	if nilArena.Bytes(1) != nil {
		t.Error("a nil arena hands out memory")
	}
}

func TestConcurrentBytes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the arena hands out memory on Linux only")
	}
	a := New(1 << 30)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				b := a.Bytes(100 + i)
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
}

// TestChunksAskForHugePages: the kernel sees the advice on the mapping
// (smaps' THPeligible), where transparent huge pages are not turned off.
func TestChunksAskForHugePages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skip("transparent huge pages are off here")
	}
	a := New(1 << 30)
	b := a.Bytes(64)
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
