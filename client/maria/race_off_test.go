//go:build !race

package maria

const raceEnabled = false
