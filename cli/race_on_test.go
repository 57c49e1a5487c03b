//go:build race

package cli

// raceEnabled: the race detector slows large decodes tenfold.
const raceEnabled = true
