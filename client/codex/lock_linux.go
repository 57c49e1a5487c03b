//go:build linux

package codex

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockKey names a file as /proc/locks does: device and inode.
type lockKey struct {
	major, minor uint64
	ino          uint64
}

// heldLocks says which of the lock files paths someone holds a lock on.
// On Linux it reads /proc/locks, the kernel's list of every lock held,
// and finds the files there by device and inode: looking never touches
// the lock, so a Codex starting at that moment can never find it taken
// by perch (a probe with flock would hold it for an instant).
func heldLocks(paths []string) map[string]bool {
	held := map[string]bool{}
	if len(paths) == 0 {
		return held
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return probeLocks(paths)
	}
	defer f.Close()
	locked := map[lockKey]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "7: FLOCK  ADVISORY  WRITE 22771 fe:00:9986046 0 EOF"; a lock
		// someone waits for has "->" after the number.
		fields := bytes.Fields(sc.Bytes())
		if len(fields) > 1 && string(fields[1]) == "->" {
			continue
		}
		if len(fields) < 6 {
			continue
		}
		parts := bytes.Split(fields[5], []byte(":"))
		if len(parts) != 3 {
			continue
		}
		major, err1 := strconv.ParseUint(string(parts[0]), 16, 64)
		minor, err2 := strconv.ParseUint(string(parts[1]), 16, 64)
		ino, err3 := strconv.ParseUint(string(parts[2]), 10, 64)
		if err1 == nil && err2 == nil && err3 == nil {
			locked[lockKey{major, minor, ino}] = true
		}
	}
	for _, p := range paths {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) != nil {
			continue
		}
		dev := uint64(st.Dev) //nolint:unconvert // its type differs by architecture
		if locked[lockKey{uint64(unix.Major(dev)), uint64(unix.Minor(dev)), st.Ino}] {
			held[p] = true
		}
	}
	return held
}
