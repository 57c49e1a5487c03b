package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/tui/render"
)

// 80×24 and very wide terminals: the footer keeps the way to the help and
// the way back, the help scrolls to every key, and prose keeps a readable
// width while the frame spans the window.

// footer is the last row of the screen.
func (h *harness) footer() string {
	v := strings.Split(h.view(), "\n")
	return v[len(v)-1]
}

// At 80 columns the hints row of every view keeps help and the way back.
func TestFooterKeepsHelpAndBackAt80x24(t *testing.T) {
	hs := goldenTask(t, 80, 24)
	hs.events(queueSnap()) // the queue panel off, a busy run still on
	hs.typ("later")
	hs.key("ctrl+g") // a held message: one more hint in each row
	check := func(what string, subs ...string) {
		t.Helper()
		f := hs.footer()
		for _, s := range subs {
			if !strings.Contains(f, s) {
				t.Errorf("%s: footer %q lacks %q", what, f, s)
			}
		}
	}
	hs.noFlash()
	check("composer", "tab/esc transcript", "f1 keys")
	hs.key("esc")
	check("transcript", "esc tasks", "? keys")
	hs.key("H")
	check("held list", "esc composer", "f1 keys")
	hs.key("esc")
	hs.key("f1")
	check("help", "esc close help")
	hs.key("esc") // closes the help
	hs.key("esc") // to the transcript
	hs.key("esc") // to the task list
	hs.taskList(events.Task{ID: "task-1", Name: "fix the parser", Status: events.StatusIdle})
	check("task list", "q quit", "? keys")
}

// Every key of the help can be scrolled to at 80×24, and the last row
// says where the view is.
func TestHelpScrollsToEveryKeyAt80x24(t *testing.T) {
	hs := goldenTask(t, 80, 24)
	hs.key("esc")
	hs.key("?")
	seen := hs.view()
	if !strings.Contains(seen, "↓ more below") {
		t.Fatalf("no scroll indicator:\n%s", seen)
	}
	for i := 0; i < 40 && !strings.Contains(hs.view(), "↑ more above"); i++ {
		hs.key("down")
		seen += hs.view()
	}
	if !strings.Contains(hs.view(), "↑ more above") {
		t.Fatalf("down never reached the end:\n%s", hs.view())
	}
	k := hs.m.keys
	for name, b := range k.bindings() {
		switch name {
		case "yes", "no": // the cancel question says them
			continue
		case "board_status", "board_source": // the board's help says them (TestBoardHelp)
			continue
		case "find_all": // only with an index to search (TestFindAllKeyRemap)
			continue
		}
		if d := b.Help().Desc; !strings.Contains(seen, d) {
			t.Errorf("%s (%q) is not in the help", name, d)
		}
	}
	// The wheel scrolls it, pgup goes back, g to the top; another key
	// closes it.
	hs.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	hs.contains("↕")
	hs.key("pgup")
	hs.key("g")
	hs.contains("↓ more below")
	hs.key("x")
	if hs.m.overlay != ovNone {
		t.Fatal("x must close the help")
	}
	hs.key("?")
	hs.contains("↓ more below") // opens at the top again
}

func TestGoldenHelpAt80x24(t *testing.T) {
	hs := goldenTask(t, 80, 24)
	hs.key("esc")
	hs.key("?")
	checkFrame(t, hs.m)
	golden.RequireEqual(t, hs.view())
}

func TestGoldenHelpAt80x24End(t *testing.T) {
	hs := goldenTask(t, 80, 24)
	hs.key("esc")
	hs.key("?")
	hs.key("G")
	checkFrame(t, hs.m)
	golden.RequireEqual(t, hs.view())
}

// wideTask is attached at w×h with a long reply holding prose and a
// table, and a command whose output has a long line.
func wideTask(t *testing.T, w, h int) *harness {
	hs := attached(t, w, h)
	hs.run(hs.m.loadTaskCmd(hs.m.gen, "task-1"))
	live := connState{Phase: sse.PhaseLive, Since: fixedNow}
	reply := "The parser stops one byte early when its input has no trailing newline: `next()` compares the " +
		"position with `len(src)-1` instead of `len(src)`, so the last token is never emitted and the caller " +
		"sees an unexpected end of input. The fix compares with the length itself, and a regression test covers " +
		"inputs with and without the final newline, with CRLF line endings too.\n\n" +
		"| input | before the fix | after the fix |\n|---|---|---|\n" +
		"| `a = 1\\n` | ok | ok |\n| `a = 1` | unexpected end of input at byte 5 | ok |\n" +
		"| `a = 1\\r\\n` | ok | ok |\n"
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live, Events: chunksOf([]events.Event{
		user("u1", "The parser fails on inputs that end without a newline. Can you find out why, fix it, and tell me what the fix changes for the callers of the package?"),
		preTool("p1", "c1", "execute_command", `{"command":"go vet ./..."}`),
		postTool("q1", "c1", "execute_command", "internal/lex/lex.go:42:2: "+strings.Repeat("the vet message is long and goes on ", 4)+"(end)\n", false),
		assistant("a1", reply),
	})})
	return hs
}

// On a 200-column terminal prose wraps at render.MaxTextWidth while the
// status bar, the rule and the footer span the window and the tool's
// output keeps its long line.
func TestGoldenWideProse(t *testing.T) {
	hs := wideTask(t, 200, 50)
	checkFrame(t, hs.m)
	view := hs.view()
	widest := 0
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, "The parser stops") || strings.Contains(l, "unexpected end of input at byte 5") {
			widest = max(widest, ansi.StringWidth(strings.TrimRight(l, " ")))
		}
	}
	if widest == 0 || widest > render.MaxTextWidth+2 {
		t.Errorf("prose is %d cells wide, want at most %d", widest, render.MaxTextWidth+2)
	}
	if !strings.Contains(view, "(end)") {
		t.Errorf("the tool's long line was cut:\n%s", view)
	}
	golden.RequireEqual(t, view)
}
