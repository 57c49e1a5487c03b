//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package spill

import "os"

// Without flock a file's owner cannot be told apart: nothing is locked and
// nothing swept (files are still removed by Close).
func lockFile(*os.File) error { return nil }

func unheld(string) bool { return false }

func lockable() bool { return false }
