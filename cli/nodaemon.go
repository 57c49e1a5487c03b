package cli

import (
	"errors"
	"net"
)

// noDaemonError: perch was given no URL and found no daemon on this
// machine (registry.Discover's error says where it looked).
type noDaemonError struct{ err error }

func (e *noDaemonError) Error() string { return e.err.Error() }
func (e *noDaemonError) Unwrap() error { return e.err }

// demoHint ends perch's error line when it found no daemon, or none
// answered where it looked: the demo needs none (the error says --url).
const demoHint = " — or try perch without a daemon: perch demo"

// noDaemon is whether err says that no daemon was found or reached (the
// connection was refused, the host not found): then perch suggests the
// demo.
func noDaemon(err error) bool {
	var nd *noDaemonError
	var op *net.OpError
	return errors.As(err, &nd) || errors.As(err, &op) && op.Op == "dial"
}
