// Package client talks to a maria daemon over HTTP and SSE.
package client

import "github.com/perch-tui/perch/sse"

// The stream's connection state lives in package sse, shared by every live
// backend; these names keep the client's API as it was.
type (
	// Phase is where a stream connection is.
	Phase = sse.Phase
	// ConnState is a stream's connection state as the UI shows it.
	ConnState = sse.ConnState
	// Progress tells a caller that waits for a stream to go quiet whether
	// it really is (see sse.Progress).
	Progress = sse.Progress
)

// The phases of a stream connection (see sse.Phase).
const (
	PhaseConnecting   = sse.PhaseConnecting
	PhaseLive         = sse.PhaseLive
	PhaseReconnecting = sse.PhaseReconnecting
	PhaseFailed       = sse.PhaseFailed
)
