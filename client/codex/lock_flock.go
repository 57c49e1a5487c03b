//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package codex

import (
	"errors"
	"os"
	"syscall"
)

// probeLocks says which lock files someone holds by asking for a shared
// lock without waiting and giving it back at once. It is the fallback
// where the kernel lists no locks (/proc/locks): for that instant perch
// holds the lock, and a Codex starting then would find it taken, so it is
// used only where nothing better is.
func probeLocks(paths []string) map[string]bool {
	held := map[string]bool{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			held[p] = true
		} else if err == nil {
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		}
		f.Close()
	}
	return held
}
