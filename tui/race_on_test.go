//go:build race

package tui

// raceEnabled: the race detector slows byte loops about tenfold.
const raceEnabled = true
