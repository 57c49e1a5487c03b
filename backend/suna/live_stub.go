package suna

import (
	"context"
	"fmt"

	"github.com/perch-tui/perch/backend"
)

// Open is a placeholder until the live Suna backend lands (its branch
// replaces this file).
func Open(cfg backend.Config) (backend.Backend, error) {
	return nil, fmt.Errorf("the live Suna backend is not built yet")
}

// Probe is a placeholder until the live Suna backend lands.
func Probe(ctx context.Context, cfg backend.Config) error {
	return fmt.Errorf("the live Suna backend is not built yet")
}
