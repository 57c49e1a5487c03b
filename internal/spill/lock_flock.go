//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package spill

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f, held until f is closed or the
// process dies.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// unheld says whether no process holds the file at path: its lock can be
// taken (and is dropped again at once).
func unheld(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return lockFile(f) == nil
}

func lockable() bool { return true }
