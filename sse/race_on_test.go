//go:build race

package sse

// raceEnabled: the race detector changes what allocations cost.
const raceEnabled = true
