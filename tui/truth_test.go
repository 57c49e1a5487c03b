package tui

import (
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// failedCommandTask is a task whose commands exited non-zero, told both
// ways a source tells it: in the output text (maria's HEAD form) and as
// an exit status beside the output (Claude Code's Bash).
func failedCommandTask(t *testing.T, w, h int) *harness {
	hs := attached(t, w, h)
	live := connState{Phase: sse.PhaseLive, Since: fixedNow}
	code := 2
	bash := postTool("q2", "c2", "Bash", "Exit code 2\nls: cannot access 'nope': No such file or directory", true)
	bash.Tool.Result.ExitCode = &code
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live, Events: chunksOf([]events.Event{
		user("u1", "Build the project."),
		preTool("p1", "c1", "execute_command", `{"command":"make build"}`),
		postTool("q1", "c1", "execute_command", "Command make build exited with status 1.\n=== STDERR (2 lines) ===\ninternal/count/count.go:12:9: undefined: lenght\nmake: *** [Makefile:2: build] Error 1\n", false),
		preTool("p2", "c2", "Bash", `{"command":"ls nope"}`),
		bash,
		preTool("p3", "c3", "execute_command", `{"command":"go vet ./..."}`),
		postTool("q3", "c3", "execute_command", "Command go vet ./... exited with status 0.\n", false),
		assistant("a1", "The build fails: `lenght` is a typo."),
	})})
	return hs
}

// TestGoldenFailedCommand: a command that exited non-zero is marked ✗
// with its exit status, whichever way the source reported it; one that
// exited 0 is ✓ (the same rule tail, export md and replay print:
// events.ToolOutcome).
func TestGoldenFailedCommand(t *testing.T) {
	hs := failedCommandTask(t, 80, 24)
	checkFrame(t, hs.m)
	golden.RequireEqual(t, hs.view())
}

// TestNextItemSelectsFirstVisible: with nothing selected, ] selects the
// first item on screen and [ the last.
func TestNextItemSelectsFirstVisible(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want func([]int) int
	}{{"]", firstVisible}, {"[", lastVisible}} {
		hs := failedCommandTask(t, 80, 24)
		hs.key("esc") // the transcript
		hs.view()
		if hs.m.tr.sel >= 0 {
			t.Fatalf("an item is selected before %s", tc.key)
		}
		want := tc.want(hs.m.owners)
		hs.key(tc.key)
		if want < 0 || hs.m.tr.sel != want {
			t.Errorf("%s with nothing selected selected item %d, want %d", tc.key, hs.m.tr.sel, want)
		}
	}
	hs := failedCommandTask(t, 80, 24)
	hs.key("esc")
	hs.view()
	hs.key("]")
	if hs.m.tr.sel != 0 {
		t.Errorf("] selected item %d, want the first (0): the whole session is on screen", hs.m.tr.sel)
	}
}

// TestNextErrorFindsFailedCommand: e (next error) stops at a command that
// exited non-zero, as its ✗ mark says it failed.
func TestNextErrorFindsFailedCommand(t *testing.T) {
	hs := failedCommandTask(t, 80, 24)
	hs.key("esc")
	hs.view()
	hs.key("]") // You
	hs.key("e")
	items := hs.m.tl.Items()
	if sel := hs.m.tr.sel; sel < 0 || items[sel].Tool == nil || items[sel].Tool.Name != "execute_command" {
		t.Fatalf("e selected item %d, want the failed make build", sel)
	}
}
