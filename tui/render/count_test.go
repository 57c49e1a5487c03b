package render

import (
	"testing"

	"github.com/perch-tui/perch/events"
)

func TestCountMatches(t *testing.T) {
	tool := &events.Item{Kind: events.ItemTool, Tool: &events.ToolItem{Name: "read_file", Status: events.ToolOK,
		Call: events.ToolCall{Name: "read_file", Args: []byte(`{"path":"needle.txt"}`)}, Result: &events.ToolResult{Text: "a needle\nNEEDLE\nneedles"}}}
	for _, tc := range []struct {
		it    *events.Item
		q     string
		limit int
		want  int
	}{
		{&events.Item{Kind: events.ItemAssistant, Text: "needle needle needle"}, "needle", 0, 3},
		{&events.Item{Kind: events.ItemAssistant, Text: "needle needle needle"}, "needle", 2, 2},
		{&events.Item{Kind: events.ItemAssistant, Text: "Needle needle"}, "Needle", 0, 1}, // smart case
		{&events.Item{Kind: events.ItemAssistant, Text: "aaaa"}, "aa", 0, 2},              // not overlapping
		{tool, "needle", 0, 4}, // the header's argument and the output
		{&events.Item{Kind: events.ItemAssistant, Text: "hay"}, "needle", 0, 0},
	} {
		if got, _ := countWith(tc.it, tc.q, nil, tc.limit); got != tc.want {
			t.Errorf("count %q in %q (limit %d) = %d, want %d", tc.q, PlainText(tc.it), tc.limit, got, tc.want)
		}
	}
}
