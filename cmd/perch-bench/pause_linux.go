package main

import (
	"syscall"
	"time"
)

// pause sleeps for d. Go's runtime sleeps in whole milliseconds when the
// process has nothing else to do (its network poller waits in
// milliseconds), so time.Sleep(500 µs) between two polls lasted 1.16 ms
// on the reference machine: a change that came between polls was seen
// half a millisecond late on average, which the floor never pays (cat's
// echo is on the screen before the first poll). Below 2 ms the thread
// sleeps in nanosleep itself (0.65 ms for 500 µs there); other systems
// sleep as Go does (pause_other.go).
func pause(d time.Duration) {
	if d <= 0 {
		return
	}
	if d >= 2*time.Millisecond {
		time.Sleep(d)
		return
	}
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	_ = syscall.Nanosleep(&ts, nil) // interrupted: a shorter pause does no harm
}
