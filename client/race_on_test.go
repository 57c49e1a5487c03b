//go:build race

package client

// raceEnabled: the race detector changes what allocations cost.
const raceEnabled = true
