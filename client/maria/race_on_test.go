//go:build race

package maria

// raceEnabled: the race detector slows large decodes tenfold and changes
// what allocations cost.
const raceEnabled = true
