//go:build !linux

package textmem

import "errors"

// mapChunk: only Linux lets a mapping ask for huge pages here; elsewhere
// the texts stay on the heap.
func mapChunk(int) ([]byte, error) { return nil, errors.New("no huge pages on this platform") }
