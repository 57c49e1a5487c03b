package events

import (
	"strings"
	"testing"
)

// memStore is a BodyStore in memory.
type memStore struct{ b strings.Builder }

func (m *memStore) Put(s string) (int64, error) {
	off := int64(m.b.Len())
	m.b.WriteString(s)
	return off, nil
}

func (m *memStore) Get(off int64, n int) (string, error) {
	return m.b.String()[off : off+int64(n)], nil
}

func (m *memStore) ReadAt(p []byte, off int64) (int, error) {
	return copy(p, m.b.String()[off:]), nil
}

// Spilled outputs that end alike (same exit status, no error) each read
// back their own text and outcome, and a later result replaces a spilled
// one whole.
func TestSpilledOutputsKeepTheirOwnText(t *testing.T) {
	t.Parallel()
	tl := NewTimeline()
	tl.SetBodyStore(&memStore{}, SpillOptions{Min: 8})
	zero := 0
	post := func(id, text string, exit *int) {
		tl.Apply(Event{Kind: KindPostToolCall, ID: "p" + id, Tool: &ToolEvent{
			Call: ToolCall{ID: id, Name: "execute_command"}, Name: "execute_command",
			Result: &ToolResult{Text: text, ExitCode: exit}}})
	}
	post("a", "first output, long enough", &zero)
	post("b", "second output, long enough", &zero)
	items := tl.Items()
	if len(items) != 2 || items[0].Tool.spill == nil || items[1].Tool.spill == nil {
		t.Fatalf("outputs not spilled: %d items", len(items))
	}
	for i, want := range []string{"first output, long enough", "second output, long enough"} {
		tool := items[i].Tool
		if got := tool.OutputText(); got != want {
			t.Errorf("item %d reads %q, want %q", i, got, want)
		}
		if got := tool.Output().Text; got != want {
			t.Errorf("item %d's output is %q, want %q", i, got, want)
		}
		if e := tool.Result.Exit(); e == nil || *e != 0 || tool.Outcome() != OutcomeOK || tool.OutputLen() != len(want) {
			t.Errorf("item %d: exit %v, outcome %v, length %d", i, e, tool.Outcome(), tool.OutputLen())
		}
	}
	two := 2
	post2 := &ToolResult{Text: "short", ExitCode: &two}
	tl.Apply(Event{Kind: KindPostToolCall, ID: "p2", Tool: &ToolEvent{
		Call: ToolCall{ID: "a", Name: "execute_command"}, Name: "execute_command", Result: post2}})
	if tool := items[0].Tool; tool.OutputText() != "short" || *tool.Result.Exit() != 2 {
		t.Errorf("a later result did not replace the spilled one: %q, exit %d", tool.OutputText(), *tool.Result.Exit())
	}
	if got := items[1].Tool.OutputText(); got != "second output, long enough" || *items[1].Tool.Result.Exit() != 0 {
		t.Errorf("the other item changed: %q", got)
	}
}
