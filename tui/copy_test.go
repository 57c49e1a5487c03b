package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/tools"
)

// fakeClipboard records what a copy put on the system clipboard, or
// fails like a machine without a clipboard tool.
type fakeClipboard struct {
	got []string
	err error
}

func (f *fakeClipboard) WriteAll(s string) error {
	f.got = append(f.got, s)
	return f.err
}

// copyHarness is a task with a file read (maria's rows, " L01 | "), a
// command and a reply, the transcript focused. The file has no known type:
// highlighting starts regexp2's clock goroutine, which outlives a test by a
// second (see TestCopyCodeBlock).
func copyHarness(t *testing.T, clip *fakeClipboard, env map[string]string, reply string) *harness {
	t.Helper()
	hs := newHarness(t, 220, 30, Config{TaskID: "task-1", Clipboard: clip, Getenv: func(k string) string { return env[k] }})
	hs.events(
		user("u1", "show me"),
		preTool("p1", "c1", tools.MariaRead, `{"path":"NOTES","start_line":3}`),
		postTool("q1", "c1", tools.MariaRead, "File: NOTES (lines 3-7 (5 lines))\n L03 | import \"fmt\"\n L04 | \n L05 | func main() {\n L06 | \tfmt.Println(\"hi\")\n L07 | }", false),
		preTool("p2", "c2", tools.MariaCommand, `{"command":"ls"}`),
		postTool("q2", "c2", tools.MariaCommand, "Command ls exited with status 0.\n=== STDOUT (2 lines) ===\nREADME.md\nmain.go\n", false),
		assistant("a1", reply),
	)
	hs.key("tab")
	return hs
}

// osc52 is the text the last OSC 52 copy carried ("" when none).
func (h *harness) osc52() string {
	s := ""
	for _, m := range h.other {
		if fmt.Sprintf("%T", m) == "tea.setClipboardMsg" {
			s = fmt.Sprint(m)
		}
	}
	return s
}

func (h *harness) selectKind(t *testing.T, kind events.ItemKind, name string) {
	t.Helper()
	for i, it := range h.m.tl.Items() {
		if it.Kind == kind && (name == "" || it.Tool != nil && it.Tool.Name == name) {
			h.m.selectItem(i)
			return
		}
	}
	t.Fatalf("no %v item %q", kind, name)
}

// TestCopyToolOutputAsProduced: y copies a tool's output as the tool gave
// it, to both clipboards, and says the system clipboard took it.
func TestCopyToolOutputAsProduced(t *testing.T) {
	clip := &fakeClipboard{}
	hs := copyHarness(t, clip, map[string]string{"TERM": "xterm-256color"}, "done")
	hs.selectKind(t, events.ItemTool, tools.MariaRead)
	hs.key("y")
	want := "import \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}"
	if len(clip.got) != 1 || clip.got[0] != want {
		t.Fatalf("system clipboard got %q, want %q", clip.got, want)
	}
	if hs.osc52() != want {
		t.Errorf("OSC 52 carried %q", hs.osc52())
	}
	hs.contains("copied 5 lines (48 bytes) to the clipboard")

	hs.selectKind(t, events.ItemTool, tools.MariaCommand)
	hs.key("y")
	if got := clip.got[len(clip.got)-1]; got != "README.md\nmain.go" {
		t.Errorf("command output copied as %q", got)
	}
}

// TestCopySaysWhichClipboard: without a system clipboard the message says
// the text went to the terminal, which must allow it; where the terminal
// cannot take OSC 52 it says nothing was copied.
func TestCopySaysWhichClipboard(t *testing.T) {
	noTool := errors.New("no clipboard tool found")
	cases := []struct {
		env       map[string]string
		want      string
		notCopied bool
	}{
		{map[string]string{"TERM": "xterm-kitty"}, "sent 1 line (7 bytes) to the terminal via OSC 52 — your terminal must allow it (no system clipboard: no clipboard tool found)", false},
		{map[string]string{"TERM": "tmux-256color", "TMUX": "/tmp/tmux-1/default,1,0"}, "via OSC 52 — tmux needs set-clipboard on, and your terminal must allow it", false},
		{map[string]string{"TERM": "linux"}, "nothing copied: no system clipboard (no clipboard tool found) and the terminal (TERM=linux) does not take OSC 52", true},
	}
	for _, c := range cases {
		t.Run(c.env["TERM"], func(t *testing.T) {
			hs := copyHarness(t, &fakeClipboard{err: noTool}, c.env, "done")
			hs.selectKind(t, events.ItemUser, "")
			hs.key("y")
			hs.contains(c.want)
			if c.notCopied {
				hs.lacks("copied 1")
				if !hs.m.flash.err {
					t.Error("a copy that went nowhere is not shown as an error")
				}
			}
		})
	}
}

// TestCopyCodeBlock: c copies a reply's code block, the next one at each
// press, exactly as written.
func TestCopyCodeBlock(t *testing.T) {
	defer noGoroutinesLeft(t, goleak.IgnoreCurrent())
	clip := &fakeClipboard{}
	hs := copyHarness(t, clip, map[string]string{"TERM": "xterm"},
		"Two ways:\n\n```go\nfmt.Println(\"a\")\n```\n\nor\n\n```sh\necho b\n```\n")
	hs.selectKind(t, events.ItemAssistant, "")
	hs.key("c")
	hs.contains("copied code block 1 of 2 (go), 1 line (16 bytes) to the clipboard — c again for the next")
	hs.key("c")
	hs.key("c")
	want := []string{"fmt.Println(\"a\")", "echo b", "fmt.Println(\"a\")"}
	if strings.Join(clip.got, "|") != strings.Join(want, "|") {
		t.Errorf("copied %q, want %q", clip.got, want)
	}
	hs.selectKind(t, events.ItemTool, tools.MariaCommand)
	hs.key("c")
	hs.contains("no code block in this item — y copies all of it")
}

// TestCopyLines: Y asks for a range of the item's lines, numbered as the
// view numbers them (a file read from line 3 starts at 3).
func TestCopyLines(t *testing.T) {
	clip := &fakeClipboard{}
	hs := copyHarness(t, clip, map[string]string{"TERM": "xterm"}, "done")
	hs.selectKind(t, events.ItemTool, tools.MariaRead)
	hs.key("Y")
	hs.contains("copy lines")
	hs.contains("of 3-7")
	hs.typ("5-6")
	hs.key("enter")
	if len(clip.got) != 1 || clip.got[0] != "func main() {\n\tfmt.Println(\"hi\")" {
		t.Fatalf("copied %q", clip.got)
	}
	hs.contains("copied lines 5-6 (32 bytes) to the clipboard")

	hs.key("Y")
	hs.typ("9-12")
	hs.key("enter")
	hs.contains("no lines 9-12: this item has lines 3-7")
	hs.key("Y")
	hs.typ("x")
	hs.key("enter")
	hs.contains(`lines "x" not understood`)
	if len(clip.got) != 1 {
		t.Errorf("a bad range copied something: %q", clip.got)
	}
	// The prompt's digits are not a search.
	if hs.m.search.active() != "" {
		t.Errorf("search is %q", hs.m.search.active())
	}
}

// noGoroutinesLeft waits until the goroutines a test started are gone.
// Drawing code blocks highlights them, which starts regexp2's clock; it
// stops a second after the last match, longer than goleak waits, and the
// goleak checks of later tests would see it.
func noGoroutinesLeft(t *testing.T, before goleak.Option) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := goleak.Find(before) // retries for a while itself
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Error(err)
			return
		}
	}
}
