//go:build !linux

package importer

import "time"

// cpuTime is unknown here: x-stdlib-cpu is not reported.
func cpuTime() time.Duration { return 0 }
