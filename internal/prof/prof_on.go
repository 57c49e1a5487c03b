//go:build perchprof

package prof

import (
	"os"
	"runtime/pprof"
)

// Start: with the perchprof build tag, PERCH_CPUPROFILE=FILE writes a CPU
// profile of the whole invocation of perch, until stop
// (docs/performance.md, "Export performance"). Ordinary builds carry no
// profiler.
func Start() (stop func()) {
	path := os.Getenv("PERCH_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
