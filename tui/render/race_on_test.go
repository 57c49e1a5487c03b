//go:build race

package render

// raceEnabled: the race detector slows byte loops about tenfold; time
// bounds scale with slow, and the biggest texts shrink.
const raceEnabled = true
