// Package testpar sets how many parallel tests of a package run at once,
// for packages whose tests mostly wait (on fakes, sockets, timers and
// terminals) rather than compute. go test's default is one per core, so
// on a small machine such tests would take turns sleeping.
package testpar

import (
	"flag"
	"strconv"
)

// Raise sets -test.parallel to n unless the command line gave it. Call it
// from TestMain before m.Run; it parses the command line, as TestMain must
// before it reads flags.
func Raise(n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
