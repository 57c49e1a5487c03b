//go:build !linux

package main

import "time"

// pause sleeps for d (see pause_linux.go).
func pause(d time.Duration) {
	if d > 0 {
		time.Sleep(d)
	}
}
