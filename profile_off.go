//go:build !perchprof

package main

// startProfile is a no-op without the perchprof build tag (see
// profile_on.go).
func startProfile() (stop func()) { return func() {} }
