package events

import "testing"

// A Pruned event marks the output whose PostToolCall had its id, whether
// that id is a UUID or not, and only that one: ids that differ only in the
// case of their letters are different ids.
func TestPrunedFindsItsOutput(t *testing.T) {
	t.Parallel()
	tl := NewTimeline()
	ids := []string{
		"c6679513-a268-403e-bbd6-0ff87149fb7f",
		"C6679513-A268-403E-BBD6-0FF87149FB7F",
		"post-7",
	}
	for i, id := range ids {
		call := ToolCall{ID: string(rune('a' + i)), Name: "read_file"}
		tl.Apply(Event{Kind: KindPostToolCall, ID: id, Tool: &ToolEvent{Call: call, Name: "read_file",
			Result: &ToolResult{Text: "out"}}})
	}
	for i, id := range ids {
		tl.Apply(Event{Kind: KindPruned, PrunedID: id})
		for j, it := range tl.Items() {
			if it.Tool.Pruned != (j <= i) {
				t.Fatalf("after pruning %q: item %d pruned %v", id, j, it.Tool.Pruned)
			}
		}
	}
	if tl.Apply(Event{Kind: KindPruned, PrunedID: "c6679513-a268-403e-bbd6-0ff87149fb70"}); tl.Meta().PrunedCount != 4 {
		t.Fatalf("pruned count %d", tl.Meta().PrunedCount)
	}
}
