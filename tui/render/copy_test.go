package render

import (
	"testing"

	"github.com/perch-tui/perch/events"
)

// TestCopyText: a copy is the text as the tool gave it, tabs kept, no row
// prefixes or framing, escapes gone; numbered as the view numbers it.
func TestCopyText(t *testing.T) {
	items := fixtures()
	cases := []struct {
		name  string
		want  string
		first int
	}{
		{"read_head", "package main\n\nimport \"fmt\"\n\n// main says hi.\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n\nfunc helper(a, b int) int {\n\treturn a + b\n}", 1},
		{"read_legacy", "package main\n\nimport \"fmt\"\n\n// main says hi.\nfunc main() {\n\tfmt.Println(\"hi\")\n}", 1},
		{"cmd_ok", "README.md\nmain.go", 1},
		{"cmd_error", "Error executing command: working directory /srv/app does not exist", 1},
		{"hostile_user", "", 1}, // checked for controls only
	}
	for _, c := range cases {
		got, first := CopyText(items[c.name])
		if c.name == "hostile_user" {
			for _, r := range got {
				if r == 0x1b || r == '\r' || r == 0x2066 {
					t.Errorf("%s: control %U kept: %q", c.name, r, got)
				}
			}
			continue
		}
		if got != c.want || first != c.first {
			t.Errorf("%s: CopyText = %q (from %d), want %q (from %d)", c.name, got, first, c.want, c.first)
		}
	}
	read := toolItem("read_file", map[string]any{"path": "a"}, events.ToolOK, &events.ToolResult{
		Text: "File: a (lines 40-41 (2 lines))\n L40 | x\n L41 | y"})
	if got, first := CopyText(read); got != "x\ny" || first != 40 {
		t.Errorf("a read from line 40: %q from %d", got, first)
	}
}

// TestCodeBlocks: a reply's code blocks, fenced or indented, with their
// language, as written.
func TestCodeBlocks(t *testing.T) {
	got := CodeBlocks("intro\n\n```go\nfunc main() {\n\tx()\n}\n```\n\ntext\n\n    indented \x1b[31mred\n\n~~~\nplain\n~~~\n")
	want := []CodeBlock{{"go", "func main() {\n\tx()\n}"}, {"", "indented red"}, {"", "plain"}}
	if len(got) != len(want) {
		t.Fatalf("CodeBlocks = %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d = %q, want %q", i, got[i], want[i])
		}
	}
}
