//go:build !linux

package textmem

import "errors"

// Only Linux lets a mapping ask for huge pages here; elsewhere a mapped
// arena hands out nothing and the texts stay on the heap.
const supported = false

func mapChunk(int) ([]byte, error) { return nil, errors.New("no huge pages on this platform") }
