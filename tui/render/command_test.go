package render

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
)

// TestCommandOutcomeMarks: the header mark of execute_command says how the
// command ended, without colour too: ✓ exit 0, ✗ ran and exited non-zero,
// ⧖ timed out, and ⊗ when the tool itself failed.
func TestCommandOutcomeMarks(t *testing.T) {
	cmd := func(status events.ToolStatus, res *events.ToolResult) *events.Item {
		return toolItem("execute_command", map[string]any{"command": "go test ./..."}, status, res)
	}
	cases := []struct {
		name      string
		it        *events.Item
		mark, tag string
		style     func(st *styles.Styles) string // the mark as the theme draws it
	}{
		{"exit 0", cmd(events.ToolOK, &events.ToolResult{Text: "Command go test ./... exited with status 0.\n=== STDOUT (1 lines) ===\nok\n"}),
			"✓", "exit 0", func(st *styles.Styles) string { return st.Tool.Status.OK.Render("✓") }},
		{"exit 1", cmd(events.ToolOK, &events.ToolResult{Text: "Command go test ./... exited with status 1.\n=== STDOUT (1 lines) ===\nFAIL\n"}),
			"✗", "exit 1", func(st *styles.Styles) string { return st.Tool.Status.Failed.Render("✗") }},
		{"exit 2 structured", cmd(events.ToolOK, &events.ToolResult{Command: &events.CommandResult{Command: "go test ./...", ExitCode: intp(2), Stderr: "no Go files\n"}}),
			"✗", "exit 2", func(st *styles.Styles) string { return st.Tool.Status.Failed.Render("✗") }},
		{"killed by a signal", cmd(events.ToolOK, &events.ToolResult{Text: "Command go test ./... exited with status -1.\n"}),
			"✗", "exit -1", func(st *styles.Styles) string { return st.Tool.Status.Failed.Render("✗") }},
		{"timed out", cmd(events.ToolOK, &events.ToolResult{Text: "Command go test ./... timed out after 600 seconds."}),
			"⧖", "timed out", func(st *styles.Styles) string { return st.Tool.Status.TimedOut.Render("⧖") }},
		{"tool error", cmd(events.ToolError, &events.ToolResult{IsError: true, Text: "Error executing command: no such directory", ErrorText: "Error executing command: no such directory"}),
			"⊗", "", func(st *styles.Styles) string { return st.Tool.Status.Error.Render("⊗") }},
		{"unparseable output", cmd(events.ToolOK, &events.ToolResult{Text: "something else entirely"}),
			"✓", "", func(st *styles.Styles) string { return st.Tool.Status.OK.Render("✓") }},
		{"cancelled", cmd(events.ToolCancelled, nil),
			"⊘", "cancelled", func(st *styles.Styles) string { return st.Tool.Status.Cancelled.Render("⊘") }},
	}
	for _, th := range []styles.Theme{styles.Dark, styles.Light, styles.NoColor} {
		st := styles.New(th)
		r := New(st, th)
		for _, c := range cases {
			t.Run(th.String()+"/"+c.name, func(t *testing.T) {
				head := r.Item(c.it, Options{Width: 80})[0]
				plain := strings.TrimSpace(ansi.Strip(head))
				if !strings.HasPrefix(plain, c.mark+" execute_command") {
					t.Fatalf("header %q: want mark %q", plain, c.mark)
				}
				if c.tag != "" && !strings.HasSuffix(plain, "  "+c.tag) {
					t.Fatalf("header %q: want tag %q", plain, c.tag)
				}
				if c.tag == "" && strings.Contains(plain, "exit") {
					t.Fatalf("header %q: no exit badge expected", plain)
				}
				if want := c.style(st); !strings.HasPrefix(strings.TrimLeft(head, " "), want) {
					t.Fatalf("mark drawn as %q, want %q", head, want)
				}
			})
		}
	}
	// Each outcome has its own mark, so none depends on colour.
	marks := map[string]bool{}
	for _, m := range []string{styles.IconOK, styles.IconFailed, styles.IconTimedOut, styles.IconError, styles.IconCancelled, styles.IconUnknown, styles.IconRunning} {
		if marks[m] {
			t.Errorf("two tool outcomes share the mark %q", m)
		}
		marks[m] = true
	}
}

// TestCommandJSONOutput: a command result reported as a JSON object with
// its exit code apart (Suna's tools) shows the command's output, not the
// JSON; any other text is shown as it is.
func TestCommandJSONOutput(t *testing.T) {
	r := New(styles.New(styles.NoColor), styles.NoColor)
	body := func(text string) string {
		it := toolItem("execute_command", map[string]any{"command": "ls"}, events.ToolOK,
			&events.ToolResult{Text: text, ExitCode: intp(0)})
		return ansi.Strip(strings.Join(r.Item(it, Options{Width: 80}), "\n"))
	}
	got := body(`{"output": "notes.md\nmain.go\n", "exit_code": 0, "cwd": "/workspace"}`)
	if !strings.Contains(got, "notes.md") || !strings.Contains(got, "main.go") || strings.Contains(got, `"output"`) {
		t.Errorf("JSON result drawn as:\n%s", got)
	}
	for _, text := range []string{`{"result": "x"}`, `{"output": 3}`, `{not json "output"`, "plain output"} {
		if got := body(text); !strings.Contains(got, strings.Split(text, "\n")[0]) {
			t.Errorf("%q drawn as:\n%s", text, got)
		}
	}
}
