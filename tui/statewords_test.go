package tui

import (
	"testing"
	"time"

	"github.com/perch-tui/perch/sse"
)

// The composer's rule and the hints change with the connection as soon as
// it changes, not at the next resize: while the stream is down mid-run
// there is no "cancel run" to offer, and enter keeps the message.
func TestStateWordsFollowTheConnection(t *testing.T) {
	hs := newHarness(t, 120, 30, Config{TaskID: "task-1"})
	live := connState{Phase: sse.PhaseLive, Since: fixedNow}
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live, Events: chunksOf(nil)})
	hs.events(user("u1", "go"), runStart("r1", fixedNow))
	hs.contains("ctrl+x cancel run")
	hs.contains("queue a message")

	down := connState{Phase: sse.PhaseReconnecting, Attempt: 1, RetryIn: 2 * time.Second, Err: refused(), Since: fixedNow}
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &down})
	hs.lacks("cancel run")
	hs.lacks("queue a message")
	hs.contains("disconnected · enter keeps it")
	hs.contains("enter keep")

	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live})
	hs.contains("ctrl+x cancel run")
	hs.contains("queue a message")
}
