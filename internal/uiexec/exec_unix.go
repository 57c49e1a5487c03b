//go:build unix

package uiexec

import (
	"fmt"
	"syscall"
)

// Exec replaces this process with path: the same process id, terminal,
// open standard streams and signal dispositions (Go's handlers fall back
// to the defaults, as in any newly started program), so perch-ui's exit
// code is perch's. It returns only when the exec fails.
func Exec(path string, args, env []string) error {
	argv := append([]string{path}, args...)
	if err := syscall.Exec(path, argv, env); err != nil {
		return fmt.Errorf("start the terminal UI %s: %w", path, err)
	}
	return nil // not reached
}
