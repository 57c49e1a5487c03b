//go:build race

package events

// raceEnabled: the race detector slows large decodes tenfold.
const raceEnabled = true
