//go:build unix

package cli

import (
	"os"
	"syscall"
)

// appendOnly reports whether f was opened with O_APPEND (where every write
// goes to the end, whatever the position).
func appendOnly(f *os.File) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var fl uintptr
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		fl, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	}); err != nil {
		return false, err
	}
	if errno != 0 {
		return false, errno
	}
	return fl&syscall.O_APPEND != 0, nil
}
