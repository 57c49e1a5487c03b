package render

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
)

// TestWholeOutputsBoundedAtRender: the timeline keeps tool outputs whole,
// so bounding is the renderer's: a 30 MB read_file (rows kept as maria sent
// them) and a 30 MB execute_command (stdout a slice of the text) render in
// bounded lines (collapsed) or bounded work per screen (expanded) and time,
// with the rows' prefixes stripped, and PlainText
// (copy, search) gives at most about maxPlain bytes (tabs expanded).
func TestWholeOutputsBoundedAtRender(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	var rows strings.Builder
	const n = 400_000
	for i := 1; rows.Len() < 30<<20; i++ {
		num := strconv.Itoa(i)
		rows.WriteString(" L" + strings.Repeat("0", 6-len(num)) + num + " | \tfunc f" + num + "() { return \"é中😀\" } // " + strings.Repeat("x", 40) + "\n")
	}
	body := strings.TrimSuffix(rows.String(), "\n")
	lines := strings.Count(body, "\n") + 1
	read := "File: big.go (lines 1-" + strconv.Itoa(lines) + " (" + strconv.Itoa(lines) + " lines))\n" + body
	stdout := strings.Repeat("ok  \tgithub.com/example/pkg\t0.042s\n", 30<<20/35)
	cmd := "Command go test exited with status 0.\n=== STDOUT (" + strconv.Itoa(n) + " lines) ===\n" + stdout
	items := map[string]*events.Item{
		"read_file": toolItem("read_file", map[string]any{"path": "big.go"}, events.ToolOK, &events.ToolResult{Text: read,
			File: &events.FileContent{Path: "big.go", StartLine: 1, EndLine: lines, Content: body, Numbered: true}}),
		"execute_command": toolItem("execute_command", map[string]any{"command": "go test"}, events.ToolOK, &events.ToolResult{Text: cmd,
			Command: &events.CommandResult{Command: "go test", ExitCode: new(int), Stdout: cmd[len(cmd)-len(stdout):]}}),
	}
	for name, it := range items {
		for _, exp := range []bool{false, true} {
			start := time.Now()
			var out []string
			if exp {
				out = screens(t, r, it, Options{Width: 100, Expanded: true})
			} else {
				out = r.Item(it, Options{Width: 100})
			}
			if d := time.Since(start); d > slow(time.Second) {
				t.Errorf("%s expanded=%v took %v", name, exp, d)
			}
			checkLines(t, name, out, 100)
			if name == "read_file" {
				plain := ansi.Strip(strings.Join(out, "\n"))
				if strings.Contains(plain, " | ") || !strings.Contains(plain, "func f1()") {
					t.Errorf("read_file rows not stripped:\n%s", plain[:min(len(plain), 2000)])
				}
			}
		}
		if p := PlainText(it); len(p) > 4*maxPlain || !strings.Contains(p, "bytes not shown") {
			t.Errorf("%s: PlainText gives %d bytes", name, len(p))
		}
	}
}
