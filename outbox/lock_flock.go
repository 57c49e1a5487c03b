//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package outbox

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock on path without waiting. ok is false
// when another open file (in this process or another) holds it. The lock
// goes when the returned file is closed, or when the process dies.
func tryLock(path string) (f *os.File, ok bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err == nil {
		return f, true, nil
	}
	f.Close()
	if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN) {
		return nil, false, nil
	}
	return nil, false, &os.PathError{Op: "flock", Path: path, Err: err}
}

// lockIsCrossProcess says whether tryLock excludes other processes.
const lockIsCrossProcess = true

// unlockPath has nothing to do: closing the file drops the flock.
func unlockPath(string) {}
