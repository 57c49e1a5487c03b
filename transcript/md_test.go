package transcript

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
)

// TestMarkdownExitCodeAndCost: a failed command shows its exit code when
// the source reported it beside the output (Claude Code's Bash), and a
// turn's cost is rounded for people (the JSON forms keep it exact).
func TestMarkdownExitCodeAndCost(t *testing.T) {
	t.Parallel()
	code := 3
	call := events.ToolCall{ID: "t1", Name: "Bash", Args: []byte(`{"command":"exit 3"}`)}
	tl := events.NewTimeline()
	tl.Apply(events.Event{Kind: events.KindAssistantMessage, ID: "m1", ToolCalls: []events.ToolCall{call},
		Usage: &events.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.041812345, HasCost: true}})
	tl.Apply(events.Event{Kind: events.KindPostToolCall, Tool: &events.ToolEvent{Call: call, Name: "Bash",
		Result: &events.ToolResult{Text: "Exit code 3\nbuilding", IsError: true, ExitCode: &code}}})
	tl.EndOfInput()
	var b bytes.Buffer
	if err := WriteMarkdown(&b, tl, "t"); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"(failed, exit 3)", "5 out, $0.0418_"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	var j bytes.Buffer
	if err := WriteJSONL(&j, tl); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), `"cost_usd":0.041812345`) {
		t.Errorf("the JSON cost is not exact:\n%s", j.String())
	}
}
