// Package sse keeps a Server-Sent Events subscription open the way a
// browser's EventSource does, for every live backend perch talks to.
package sse

import (
	"fmt"
	"time"
)

// Phase is where a stream connection is.
type Phase uint8

const (
	// PhaseConnecting: the first request is on its way.
	PhaseConnecting Phase = iota
	// PhaseLive: a 200 event stream is open.
	PhaseLive
	// PhaseReconnecting: the stream broke (or closed) and a retry is
	// scheduled in RetryIn.
	PhaseReconnecting
	// PhaseFailed: the server refused the stream for good (204, or a 4xx
	// other than 408/429); Err says why. No retry follows.
	PhaseFailed
)

func (p Phase) String() string {
	switch p {
	case PhaseConnecting:
		return "connecting"
	case PhaseLive:
		return "live"
	case PhaseReconnecting:
		return "reconnecting"
	}
	return "failed"
}

// ConnState is a stream's connection state as the UI shows it.
type ConnState struct {
	Phase   Phase
	Attempt int           // reconnect attempts since the last live connection
	RetryIn time.Duration // PhaseReconnecting: delay before the next attempt
	Err     error         // PhaseReconnecting/PhaseFailed: the last error
	Since   time.Time     // when this state was entered
}

// String renders the state for a status bar, e.g. "reconnecting in 3s (…)".
func (s ConnState) String() string {
	switch s.Phase {
	case PhaseReconnecting:
		secs := int((s.RetryIn + time.Second - 1) / time.Second)
		if s.Err != nil {
			return fmt.Sprintf("reconnecting in %ds (%v)", secs, s.Err)
		}
		return fmt.Sprintf("reconnecting in %ds", secs)
	case PhaseFailed:
		if s.Err != nil {
			return fmt.Sprintf("failed: %v", s.Err)
		}
		return "failed"
	}
	return s.Phase.String()
}
