package transcript

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/tools"
)

// writeEditMarkdown writes the change an edit tool's call makes as the
// terminal UI shows it (tools.Edits: each file's diff, under a line naming
// the file when the header's path is not enough) instead of the tool's
// terse result ("File edited"). It reports false, writing nothing, when
// the call is no edit or failed: its output (the error) is what to show.
func writeEditMarkdown(b *bufio.Writer, t *events.ToolItem, full bool) bool {
	name := t.Name
	if name == "" {
		name = t.Call.Name
	}
	edits := tools.Edits(name, t.Call.Args)
	if len(edits) == 0 || tools.KindOf(name) == tools.Command {
		return false
	}
	if res := t.Output(); res != nil && (res.IsError || t.Status == events.ToolError) {
		return false
	}
	for _, e := range edits {
		if len(edits) > 1 || e.Diff == "" || e.MovedTo != "" {
			fmt.Fprintf(b, "%s\n\n", editFileLine(e))
		}
		if e.Diff != "" {
			writeFenced(b, "diff", e.Diff, full)
		}
	}
	return true
}

// editFileLine names one file of an edit as the terminal UI does: "A
// new.txt", "M a.go", "D old.go", "R a.go → b.go".
func editFileLine(e tools.FileEdit) string {
	path := "`" + strings.ReplaceAll(sanitize.Line(e.Path), "`", "'") + "`"
	switch {
	case e.MovedTo != "":
		return "R " + path + " → `" + strings.ReplaceAll(sanitize.Line(e.MovedTo), "`", "'") + "`"
	case e.Op == tools.EditAdd:
		return "A " + path
	case e.Op == tools.EditDelete:
		return "D " + path
	}
	return "M " + path
}

// writeFenced writes text in a fence longer than any run of backquotes in
// it, cut at MaxMarkdownOutput bytes unless full.
func writeFenced(b *bufio.Writer, lang, text string, full bool) {
	if !full && len(text) > MaxMarkdownOutput {
		cut := strings.ToValidUTF8(text[:MaxMarkdownOutput], "")
		text = sanitize.Text(cut) + fmt.Sprintf("\n… (%d more bytes; --full shows everything)", len(text)-len(cut))
	} else {
		text = sanitize.Text(text)
	}
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	fmt.Fprintf(b, "%s%s\n%s\n%s\n\n", fence, lang, strings.TrimRight(text, "\n"), fence)
}
