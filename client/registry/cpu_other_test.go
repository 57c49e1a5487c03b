//go:build !linux

package registry

import "time"

// cpuTime is unknown here: x-stdlib-cpu is not reported.
func cpuTime() time.Duration { return 0 }

// rssProbe: BenchmarkImportRSS is Linux's alone.
func rssProbe() {}
