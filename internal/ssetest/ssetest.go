// Package ssetest holds what the tests of perch's SSE streams share (the
// sse package's own and the client's, which follows maria's routes through
// it): a server side that writes events, a recorder of what a stream
// reports, and a poll for a condition. It imports neither sse nor client,
// so that either package's own tests can use it.
package ssetest

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/events"
)

// Recorder collects what a stream reports, frames and connection states
// (of type S); the stream calls it from its own goroutine, the test polls
// it.
type Recorder[S any] struct {
	mu     sync.Mutex
	frames []events.Frame
	states []S
}

// Frame records a frame (the stream's onFrame).
func (r *Recorder[S]) Frame(f events.Frame) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frames = append(r.frames, f)
}

// State records a connection state (the stream's onState).
func (r *Recorder[S]) State(s S) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, s)
}

// Snapshot returns copies of what was recorded so far.
func (r *Recorder[S]) Snapshot() ([]events.Frame, []S) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]events.Frame(nil), r.frames...), append([]S(nil), r.states...)
}

// Data returns the data of the frames recorded so far, as strings.
func (r *Recorder[S]) Data() []string {
	fs, _ := r.Snapshot()
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f.Data)
	}
	return out
}

// WaitFor polls cond until it holds, or fails the test once d has passed.
func WaitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Headers starts an event stream's answer.
func Headers(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// WriteEvent writes one event and flushes it to the client.
func WriteEvent(w http.ResponseWriter, name, data string) {
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
	w.(http.Flusher).Flush()
}
