//go:build unix

package tui

import (
	"syscall"
	"time"
)

// processCPU is the processor time the test process used so far (user and
// system): steadier than wall time on a busy machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
