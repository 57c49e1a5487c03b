package tui

import (
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/client/suna"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// refused is a stream error as the sse package reports a daemon that is
// not listening: the method and URL first, the reason in the middle, a
// hint last.
func refused() error {
	op := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8090},
		Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	return fmt.Errorf("GET http://127.0.0.1:8090/v1/task/task-1/events: %w (is maria running there? set --url or PERCH_URL)", op)
}

// TestGoldenRetrying: while the task's stream retries, the status bar
// and the composer say disconnected, retrying in N s and why (connection
// refused, not the URL), not the last state ("Agent is working").
func TestGoldenRetrying(t *testing.T) {
	hs := goldenTask(t, 80, 24)
	st := connState{Phase: sse.PhaseReconnecting, Attempt: 2, RetryIn: 4 * time.Second, Err: refused(), Since: fixedNow}
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &st})
	hs.now = fixedNow.Add(time.Second)
	hs.send(tickMsg{seq: hs.m.spin.seq})
	checkFrame(t, hs.m)
	v := hs.view()
	if strings.Contains(v, "Agent is working") || strings.Contains(v, "● live") {
		t.Errorf("a disconnected task shows the last state as now:\n%s", v)
	}
	golden.RequireEqual(t, v)
}

// TestGoldenTaskGone: a task the server no longer has (its stream
// answered 404) is said to be gone, in the status bar and the composer.
func TestGoldenTaskGone(t *testing.T) {
	hs := goldenTask(t, 80, 24)
	err := &sse.StatusError{URL: "http://127.0.0.1:8090/v1/task/task-1/events", Status: 404, Message: "task not found"}
	st := connState{Phase: sse.PhaseFailed, Err: err, Since: fixedNow}
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &st, Ended: true, Err: err})
	checkFrame(t, hs.m)
	golden.RequireEqual(t, hs.view())
}

// TestGoldenDisconnected: a stream that failed for good for another
// reason says disconnected and why; the empty transcript shows the whole
// error, wrapped.
func TestGoldenDisconnected(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.run(hs.m.loadTaskCmd(hs.m.gen, "task-1"))
	err := &sse.StatusError{URL: "http://127.0.0.1:8090/v1/task/task-1/events", Status: 403, Message: "this token may not read task-1"}
	st := connState{Phase: sse.PhaseFailed, Err: err, Since: fixedNow}
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &st, Ended: true, Err: err})
	checkFrame(t, hs.m)
	golden.RequireEqual(t, hs.view())
}

// TestGoldenDaemonUnreachable: a daemon that cannot be reached is not an
// empty one ("no tasks yet — press n"): the list says where perch looked,
// why it failed, and what to do, perch demo included.
func TestGoldenDaemonUnreachable(t *testing.T) {
	hs := newHarness(t, 80, 24, Config{})
	st := connState{Phase: sse.PhaseReconnecting, Attempt: 1, RetryIn: 2 * time.Second, Err: refused(), Since: fixedNow}
	hs.send(streamBatchMsg{Src: srcDaemon, State: &st})
	hs.send(tasksLoadedMsg{err: refused()})
	checkFrame(t, hs.m)
	v := hs.view()
	if strings.Contains(v, "no tasks yet") {
		t.Errorf("an unreachable daemon shows as one without tasks:\n%s", v)
	}
	golden.RequireEqual(t, v)
}

// TestReplayIsNotLive: a file's session says replay where a live
// system's connection would be, never live.
func TestReplayIsNotLive(t *testing.T) {
	b := &fakeBackend{name: "claude-code", caps: &client.Capabilities{Recording: true}}
	hs := newHarnessOn(t, 80, 24, Config{TaskID: "task-1"}, b)
	live := connState{Phase: sse.PhaseLive, Since: fixedNow}
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live, Events: chunksOf([]events.Event{
		user("u1", "hello"), assistant("a1", "hi"),
	})})
	checkFrame(t, hs.m)
	hs.contains("▶ replay")
	hs.lacks("live")
}

// TestErrReasonAndTaskGone: the reason a person acts on, from the errors
// every system's stream gives, and "task gone" for any system's 404.
func TestErrReasonAndTaskGone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		reason string
		gone   bool
	}{
		{"refused", refused(), "connection refused", false},
		{"sse 404", &sse.StatusError{URL: "http://h/v1/task/x/events", Status: 404, Message: "task not found"}, "404 Not Found: task not found", true},
		{"maria 404", &maria.APIError{Method: "GET", URL: "http://h/v1/task/x", Status: 404, Message: "task not found"}, "404 Not Found: task not found", true},
		{"suna 404", &suna.APIError{Method: "GET", URL: "http://h/api/thread/x", Status: 404, Message: "Thread not found"}, "404 Not Found: Thread not found", true},
		{"no such session", fmt.Errorf("follow: %w", &client.NoTaskError{Query: "abc"}), `no task matches "abc"`, true},
		{"opaque", fmt.Errorf("GET http://127.0.0.1:8090/v1/task/x/events: stream stalled"), "GET 127.0.0.1:8090/…: stream stalled", false},
	} {
		if got := errReason(tc.err); got != tc.reason {
			t.Errorf("%s: reason %q, want %q", tc.name, got, tc.reason)
		}
		if got := taskGone(tc.err); got != tc.gone {
			t.Errorf("%s: gone %v, want %v", tc.name, got, tc.gone)
		}
	}
}
