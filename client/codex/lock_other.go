//go:build !linux

package codex

// heldLocks: without /proc/locks, a non-blocking probe (see probeLocks).
func heldLocks(paths []string) map[string]bool { return probeLocks(paths) }
