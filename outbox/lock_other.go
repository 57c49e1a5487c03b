//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package outbox

import (
	"os"
	"sync"
)

// Without flock the locks only exclude goroutines of this process.
var (
	heldMu sync.Mutex
	held   = map[string]bool{}
)

func tryLock(path string) (f *os.File, ok bool, err error) {
	heldMu.Lock()
	defer heldMu.Unlock()
	if held[path] {
		return nil, false, nil
	}
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	held[path] = true
	return f, true, nil
}

func unlockPath(path string) {
	heldMu.Lock()
	delete(held, path)
	heldMu.Unlock()
}

const lockIsCrossProcess = false
