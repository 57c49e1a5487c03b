package pynchy

import (
	"context"
	"fmt"

	"github.com/perch-tui/perch/backend"
)

// Open is a placeholder until the live pynchy backend lands (its branch
// replaces this file).
func Open(cfg backend.Config) (backend.Backend, error) {
	return nil, fmt.Errorf("the live pynchy backend is not built yet")
}

// Probe is a placeholder until the live pynchy backend lands.
func Probe(ctx context.Context, cfg backend.Config) error {
	return fmt.Errorf("the live pynchy backend is not built yet")
}
