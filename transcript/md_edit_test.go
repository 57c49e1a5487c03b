package transcript

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
)

// The Markdown transcript shows an edit as the terminal UI does: the diff
// the call makes, not the tool's "File edited"; a failed edit shows its
// error.
func TestMarkdownKeepsTheEditDiff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tool, args, result string
		isError                  bool
		want, lacks              []string
	}{
		{"Claude Code's Edit", "Edit", `{"file_path":"a.go","old_string":"return lenght(w)","new_string":"return len(w)"}`, "The file a.go has been updated.", false,
			[]string{"```diff\n-return lenght(w)\n+return len(w)\n```"}, []string{"has been updated"}},
		{"maria's write_to_file", "write_to_file", `{"path":"notes.txt","content":"one\ntwo"}`, "Appended to /tmp/x/notes.txt", false,
			[]string{"```diff\n+one\n+two\n```"}, nil},
		{"a failed edit shows the error", "Edit", `{"file_path":"a.go","old_string":"x","new_string":"y"}`, "String to replace not found", true,
			[]string{"String to replace not found"}, []string{"```diff"}},
		{"not an edit", "read_file", `{"path":"a.go"}`, "package a", false,
			[]string{"package a"}, []string{"```diff"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			call := events.ToolCall{ID: "t1", Name: tc.tool, Args: []byte(tc.args)}
			tl := events.NewTimeline()
			tl.Apply(events.Event{Kind: events.KindAssistantMessage, ID: "m1", ToolCalls: []events.ToolCall{call}})
			tl.Apply(events.Event{Kind: events.KindPostToolCall, Tool: &events.ToolEvent{Call: call, Name: tc.tool,
				Result: &events.ToolResult{Text: tc.result, IsError: tc.isError}}})
			tl.EndOfInput()
			var b bytes.Buffer
			if err := WriteMarkdown(&b, tl, "t"); err != nil {
				t.Fatal(err)
			}
			md := b.String()
			for _, w := range tc.want {
				if !strings.Contains(md, w) {
					t.Errorf("markdown lacks %q:\n%s", w, md)
				}
			}
			for _, w := range tc.lacks {
				if strings.Contains(md, w) {
					t.Errorf("markdown has %q:\n%s", w, md)
				}
			}
		})
	}
}
