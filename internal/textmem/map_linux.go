package textmem

import (
	"fmt"
	"syscall"
)

const supported = true

// mapChunk maps n bytes of anonymous memory and asks for huge pages; a
// kernel that refuses the advice still gives the memory, in small pages.
func mapChunk(n int) ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("map %d bytes for texts: %w", n, err)
	}
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	return b, nil
}
