package suna_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind (the
// live backend's followers, watchers and streams).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
