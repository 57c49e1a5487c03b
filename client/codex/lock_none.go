//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package codex

// probeLocks: no flock here, so no lock is known to be held (every
// session shows as not running, never as running on a guess).
func probeLocks(paths []string) map[string]bool { return map[string]bool{} }
