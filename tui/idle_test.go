package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// timers counts the timers the model asks for, by message type.
type timers struct{ armed []string }

func (tm *timers) install(hs *harness) {
	hs.m.after = func(_ time.Duration, msg tea.Msg) tea.Cmd {
		tm.armed = append(tm.armed, fmt.Sprintf("%T", msg))
		return nil
	}
}

// noWork runs cmd the way the program would and fails if it produces any
// message at all: an idle model must hand Bubble Tea nothing to do.
func noWork(t *testing.T, what string, cmd tea.Cmd) {
	t.Helper()
	var walk func(tea.Cmd)
	walk = func(c tea.Cmd) {
		if c == nil {
			return
		}
		switch msg := c().(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				walk(c)
			}
		default:
			t.Fatalf("%s: an idle model still schedules %T", what, msg)
		}
	}
	walk(cmd)
}

// idleMsg is a message no part of the model cares about.
type idleMsg struct{}

// assertIdle settles the model and checks that it asks for no tick, no
// timer and no command.
func assertIdle(t *testing.T, hs *harness, what string) {
	t.Helper()
	// Let a pending animation tick run out first (the program would), and
	// the neighbour pages' layout, which waits for the stream's quiet.
	hs.send(tickMsg{seq: hs.m.spin.seq})
	settleWarm(hs)
	var tm timers
	tm.install(hs)
	if hs.m.needsTick() {
		t.Fatalf("%s: needsTick is true", what)
	}
	for range 3 {
		_, cmd := hs.m.Update(idleMsg{})
		noWork(t, what, cmd)
	}
	if len(tm.armed) != 0 || hs.m.spin.ticking {
		t.Fatalf("%s: timers armed while idle: %v (ticking %v)", what, tm.armed, hs.m.spin.ticking)
	}
}

func TestIdleModelSchedulesNothing(t *testing.T) {
	live := connState{Phase: sse.PhaseLive, Since: fixedNow}
	gone := connState{Phase: sse.PhaseFailed, Err: &maria.APIError{Method: "GET", URL: "http://d/v1/task/task-1/events", Status: 404, Message: "task not found"}}

	t.Run("attached idle", func(t *testing.T) {
		hs := attached(t, 100, 30)
		hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live})
		hs.events(user("u", "hi"), runStart("r", fixedNow), assistant("a", "hello"), runEnd("r-end"))
		assertIdle(t, hs, "attached idle")
	})
	t.Run("attached idle after a flash expired", func(t *testing.T) {
		hs := attached(t, 100, 30)
		hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live})
		settleWarm(hs)
		hs.m.setFlash("copied", false)
		var tm timers
		tm.install(hs)
		hs.send(idleMsg{})
		if len(tm.armed) != 1 || tm.armed[0] != "tui.flashExpiredMsg" {
			t.Fatalf("a flash arms exactly its expiry: %v", tm.armed)
		}
		hs.send(flashExpiredMsg{seq: hs.m.flash.seq})
		assertIdle(t, hs, "after the flash")
	})
	t.Run("attached, stream failed for good while idle", func(t *testing.T) {
		hs := attached(t, 100, 30)
		hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live})
		hs.events(user("u", "hi"), assistant("a", "hello"))
		hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &gone, Ended: true, Err: gone.Err})
		assertIdle(t, hs, "stream failed")
	})
	t.Run("task list", func(t *testing.T) {
		hs := newHarness(t, 100, 30, Config{})
		hs.send(streamBatchMsg{Src: srcDaemon, State: &live})
		hs.taskList(
			events.Task{ID: "a", Name: "idle one", Status: events.StatusIdle},
			events.Task{ID: "b", Name: "stopped one", Status: events.StatusStopped},
		)
		assertIdle(t, hs, "task list")
	})
	t.Run("task list, daemon stream failed with a task generating", func(t *testing.T) {
		hs := newHarness(t, 100, 30, Config{})
		hs.send(streamBatchMsg{Src: srcDaemon, State: &live})
		hs.taskList(events.Task{ID: "a", Name: "busy one", Status: events.StatusGenerating})
		hs.view() // the list learns which rows are visible
		if !hs.m.needsTick() {
			t.Fatal("a visible generating task animates while the daemon stream lives")
		}
		hs.send(streamBatchMsg{Src: srcDaemon, State: &gone, Ended: true, Err: gone.Err})
		hs.view()
		assertIdle(t, hs, "daemon gone")
		if v := hs.view(); strings.ContainsAny(v, "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏") {
			t.Fatalf("a frozen spinner frame is still drawn:\n%s", v)
		}
	})
}

func TestSpinnerStopsWhenStreamFailsForGood(t *testing.T) {
	hs := attached(t, 120, 30)
	live := connState{Phase: sse.PhaseLive, Since: fixedNow}
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live})
	hs.events(user("u", "run the tests"), runStart("r", fixedNow),
		preTool("p1", "c1", "execute_command", `{"command":"go test ./..."}`))
	if !hs.m.busy() || !hs.m.needsTick() || !hs.m.spin.ticking {
		t.Fatal("a generating run with a running tool animates")
	}
	hs.contains("generating")

	// The task is deleted: the daemon answers the reconnect with a 404,
	// which ends the stream for good.
	err := &maria.APIError{Method: "GET", URL: "http://d/v1/task/task-1/events", Status: 404, Message: "task not found"}
	failed := connState{Phase: sse.PhaseFailed, Err: err, Since: fixedNow}
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &failed, Ended: true, Err: err})
	hs.send(tickMsg{seq: hs.m.spin.seq}) // the tick already in flight
	if hs.m.needsTick() || hs.m.spin.ticking {
		t.Fatal("nothing may animate once the stream failed for good")
	}
	v := hs.view()
	for _, want := range []string{"✗ task gone", "404", "task not found", "last seen generating"} {
		if !strings.Contains(v, want) {
			t.Fatalf("the status bar must show the failure (%q):\n%s", want, v)
		}
	}
	if strings.ContainsAny(v, "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏") {
		t.Fatalf("a spinner frame is still drawn:\n%s", v)
	}
	// Time passing changes nothing on screen (the neighbour pages are laid
	// out once, when the stream has been quiet long enough).
	settleWarm(hs)
	hs.now = fixedNow.Add(time.Minute)
	_, cmd := hs.m.Update(idleMsg{})
	noWork(t, "after the failure", cmd)
	if v2 := hs.view(); v2 != v {
		t.Fatalf("the frozen view changed with time:\n%s\n---\n%s", v, v2)
	}
}

// settleWarm lets the neighbour pages' layout run out, as the program
// would once the stream has been quiet for warmQuiet.
func settleWarm(hs *harness) {
	hs.now = hs.now.Add(time.Second)
	hs.send(warmMsg{at: hs.m.warmKeyNow()})
}
