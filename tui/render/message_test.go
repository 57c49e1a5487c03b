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

// TestThinkingShownAndHidden: a turn of tool calls only shows its
// reasoning above its calls; hidden, the reasoning is gone and the calls
// stay; a turn of reasoning only still renders as something.
func TestThinkingShownAndHidden(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	it := &events.Item{Kind: events.ItemAssistant, Version: 1, Thinking: "check the lexer\x1b]52;c;ZXZpbA==\x07 first",
		ToolCalls: []events.ToolCall{{ID: "c", Name: "read_file"}}}
	plain := func(lines []string) string { return ansi.Strip(strings.Join(lines, "\n")) }
	shown := r.Item(it, Options{Width: 60})
	checkLines(t, "shown", shown, 60)
	if got := plain(shown); !strings.Contains(got, "💭 check the lexer first") || !strings.Contains(got, "Calls read_file") {
		t.Errorf("shown:\n%s", got)
	}
	hidden := r.Item(it, Options{Width: 60, HideThinking: true})
	if got := plain(hidden); strings.Contains(got, "lexer") || !strings.Contains(got, "Calls read_file") {
		t.Errorf("hidden:\n%s", got)
	}
	only := &events.Item{Kind: events.ItemAssistant, Version: 1, Thinking: "hmm"}
	if got := plain(r.Item(only, Options{Width: 60, HideThinking: true})); !strings.Contains(got, "thinking hidden") {
		t.Errorf("reasoning only, hidden: %q", got)
	}
	// A collapsed turn shows a few rows and says how many more; expanded,
	// every row.
	long := &events.Item{Kind: events.ItemAssistant, Version: 1, Thinking: "a\nb\n\nc\nd\ne"}
	if got := plain(r.Item(long, Options{Width: 60})); !strings.Contains(got, "c\n     … 2 more lines, enter expands") {
		t.Errorf("collapsed:\n%s", got)
	}
	if got := plain(r.Item(long, Options{Width: 60, Expanded: true})); !strings.Contains(got, "d\n     e") {
		t.Errorf("expanded:\n%s", got)
	}
}

// TestEditDiffColoured: an edit's added and removed lines are drawn in the
// diff colours, and its hostile text is made safe.
func TestEditDiffColoured(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	it := fixtures()["edit_claude"]
	lines := r.Item(it, Options{Width: 80})
	checkLines(t, "edit", lines, 80)
	var add, del bool
	for _, l := range lines {
		p := ansi.Strip(l)
		add = add || (strings.Contains(p, "+   if l.pos >=") && strings.Contains(l, r.p.add.pre))
		del = del || (strings.Contains(p, "-   if l.pos+1") && strings.Contains(l, r.p.del.pre))
	}
	if !add || !del {
		t.Errorf("diff lines not coloured (add %v, del %v):\n%q", add, del, lines)
	}
	hostile := toolItem("Edit", map[string]any{"file_path": "a\x1b[2J\u202e.go", "old_string": "x\x1b]0;t\x07", "new_string": "y\x1b[31m"}, events.ToolOK,
		&events.ToolResult{Text: "ok"})
	for _, w := range []int{80, 20} {
		checkLines(t, "hostile edit", r.Item(hostile, Options{Width: w, Expanded: true}), w)
	}
}
