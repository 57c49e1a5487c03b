package transcript

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
)

// TestMarkdownThinking: a turn of tool calls only shows its reasoning as a
// marked quote, made safe; NoThinking leaves it out.
func TestMarkdownThinking(t *testing.T) {
	t.Parallel()
	tl := events.NewTimeline()
	tl.Apply(events.Event{Kind: events.KindAssistantMessage, ID: "m1", Thinking: "first \x1b]52;c;ZXZpbA==\x07check\n\nthen fix",
		ToolCalls: []events.ToolCall{{ID: "t1", Name: "Bash"}}})
	tl.EndOfInput()
	var b bytes.Buffer
	if err := WriteMarkdown(&b, tl, "t"); err != nil {
		t.Fatal(err)
	}
	want := "## Assistant\n\n> **Thinking**\n>\n> first check\n> \n> then fix\n\n_Calls `Bash`._\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("markdown:\n%s\nwant it to hold:\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteMarkdownWith(&b, tl, "t", MarkdownOptions{NoThinking: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "check") || !strings.Contains(b.String(), "## Assistant\n\n_Calls `Bash`._") {
		t.Errorf("without thinking:\n%s", b.String())
	}
}
