//go:build !perchprof

// Package prof starts a CPU profile of the whole process in builds with
// the perchprof tag (prof_on.go); in other builds it does nothing.
package prof

// Start is a no-op without the perchprof build tag (see prof_on.go).
func Start() (stop func()) { return func() {} }
