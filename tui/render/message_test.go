package render

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
)

// TestAssistantWithoutText: a reply without text never renders as nothing;
// it names its calls, few or many, with hostile names made safe.
func TestAssistantWithoutText(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	calls := func(names ...string) []events.ToolCall {
		var out []events.ToolCall
		for i, n := range names {
			out = append(out, events.ToolCall{ID: string(rune('a' + i)), Name: n})
		}
		return out
	}
	cases := []struct {
		name  string
		it    *events.Item
		lines []string
	}{
		{"no calls", &events.Item{Kind: events.ItemAssistant, Version: 1}, []string{"(empty reply)"}},
		{"blank text", &events.Item{Kind: events.ItemAssistant, Version: 1, Text: " \n ", ToolCalls: calls("read_file")}, []string{"Calls read_file"}},
		{"many calls", &events.Item{Kind: events.ItemAssistant, Version: 1, ToolCalls: calls("a", "b", "c", "d", "e", "f")}, []string{"Calls a, b, c, and 3 more"}},
		{"four calls", &events.Item{Kind: events.ItemAssistant, Version: 1, ToolCalls: calls("a", "b", "c", "d")}, []string{"Calls a, b, c, d"}},
		{"nameless call", &events.Item{Kind: events.ItemAssistant, Version: 1, ToolCalls: calls("")}, []string{"Calls a tool"}},
		{"hostile name", &events.Item{Kind: events.ItemAssistant, Version: 1, ToolCalls: calls("x\x1b[2J\u202ey")}, nil},
		{"long name", &events.Item{Kind: events.ItemAssistant, Version: 1, ToolCalls: calls(strings.Repeat("n", 1<<20))}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines := r.Item(c.it, Options{Width: 60})
			checkLines(t, c.name, lines, 60)
			if len(lines) == 0 {
				t.Fatal("renders as nothing")
			}
			if c.lines == nil {
				return
			}
			var got []string
			for _, l := range lines {
				got = append(got, strings.TrimSpace(ansi.Strip(l)))
			}
			if strings.Join(got, "\n") != strings.Join(c.lines, "\n") {
				t.Errorf("lines %q, want %q", got, c.lines)
			}
		})
	}
}
