package events

import (
	"strings"
	"testing"
)

func TestStreamedTurnAppearsOnce(t *testing.T) {
	t.Parallel()
	tl := NewTimeline()
	tl.Apply(Event{Kind: KindUserMessage, ID: "u1", Text: "hi"})
	for _, d := range []string{"Hel", "lo", " there"} {
		tl.Apply(Event{Kind: KindTextDelta, ID: "t1", Text: d})
	}
	tl.Apply(Event{Kind: KindThinkingDelta, ID: "t1", Thinking: "hmm"})
	if n := tl.Len(); n != 2 || tl.Items()[1].Text != "Hello there" || !tl.Items()[1].Open {
		t.Fatalf("after deltas: %d items, %+v", n, tl.Items()[1])
	}
	u := &Usage{InputTokens: 10, OutputTokens: 2}
	tl.Apply(Event{Kind: KindAssistantMessage, ID: "t1", Text: "Hello there!", StopReason: StopEndTurn, Usage: u,
		ToolCalls: []ToolCall{{ID: "c1", Name: "read_file"}}})
	items := tl.Items()
	if len(items) != 3 { // user, the turn, its tool
		t.Fatalf("final form added items: %d", len(items))
	}
	turn := items[1]
	if turn.Text != "Hello there!" || turn.Thinking != "hmm" || turn.Open || turn.StopReason != StopEndTurn {
		t.Fatalf("final form not applied: %+v", turn)
	}
	// Late deltas change nothing.
	if tl.Apply(Event{Kind: KindTextDelta, ID: "t1", Text: "late"}) || turn.Text != "Hello there!" {
		t.Fatalf("late delta applied: %q", turn.Text)
	}
	// A later report replaces usage; totals follow.
	tl.Apply(Event{Kind: KindAssistantMessage, ID: "t1", Usage: &Usage{InputTokens: 12, OutputTokens: 5, CostUSD: 0.5, HasCost: true}})
	if tot := tl.Meta().Totals; tot.InputTokens != 12 || tot.OutputTokens != 5 || !tot.HasCost || tl.Len() != 3 {
		t.Fatalf("totals %+v, %d items", tot, tl.Len())
	}
}

func TestToolOutputDeltasThenResult(t *testing.T) {
	t.Parallel()
	tl := NewTimeline()
	call := ToolCall{ID: "c1", Name: "execute_command"}
	tl.Apply(Event{Kind: KindPreToolCall, Tool: &ToolEvent{Call: call, Name: call.Name}})
	tl.Apply(Event{Kind: KindToolOutputDelta, Tool: &ToolEvent{Call: ToolCall{ID: "c1"}}, Text: "line 1\n"})
	tl.Apply(Event{Kind: KindToolOutputDelta, Tool: &ToolEvent{Call: ToolCall{ID: "c1"}}, Text: "line 2\n"})
	it := tl.Items()[0]
	if it.Tool.Result == nil || it.Tool.Result.Text != "line 1\nline 2\n" || it.Tool.Status != ToolRunning {
		t.Fatalf("streamed output: %+v", it.Tool)
	}
	code := 3
	tl.Apply(Event{Kind: KindPostToolCall, Tool: &ToolEvent{Call: call, Name: call.Name, Result: &ToolResult{Text: "final", IsError: true, ExitCode: &code}}})
	if it.Tool.Result.Text != "final" || it.Tool.Status != ToolError || *it.Tool.Result.Exit() != 3 {
		t.Fatalf("result: %+v", it.Tool)
	}
	if tl.Apply(Event{Kind: KindToolOutputDelta, Tool: &ToolEvent{Call: ToolCall{ID: "c1"}}, Text: "late"}) {
		t.Fatal("a chunk after the result changed the tool")
	}
}

func TestNoticesRunStateAndEndOfInput(t *testing.T) {
	t.Parallel()
	tl := NewTimeline()
	tl.Apply(Event{Kind: KindRunState, RunStatus: StatusGenerating})
	tl.Apply(Event{Kind: KindPreToolCall, Tool: &ToolEvent{Call: ToolCall{ID: "c1", Name: "x"}, Name: "x"}})
	tl.Apply(Event{Kind: KindNotice, Level: LevelWarning, NoticeKind: NoticeHost, Text: "restarting"})
	if tl.Status() != RunGenerating || tl.Items()[1].NoticeKind != NoticeHost {
		t.Fatalf("status %v, notice %+v", tl.Status(), tl.Items()[1])
	}
	tl.Apply(Event{Kind: KindEndOfInput})
	if tl.Status() != RunIdle || tl.Items()[0].Tool.Status != ToolUnknown {
		t.Fatalf("end of input: status %v, tool %v", tl.Status(), tl.Items()[0].Tool.Status)
	}
	tl2 := NewTimeline()
	tl2.Apply(Event{Kind: KindRunState, RunStatus: StatusStopped})
	tl2.Apply(Event{Kind: KindEndOfInput})
	if tl2.Status() != RunStopped {
		t.Fatalf("a stopped session must stay stopped: %v", tl2.Status())
	}
}

// BenchmarkTextDeltas: many small deltas into one turn cost linear time.
func BenchmarkTextDeltas(b *testing.B) {
	delta := strings.Repeat("w", 12)
	for i := 0; i < b.N; i++ {
		tl := NewTimeline()
		for j := 0; j < 20000; j++ {
			tl.Apply(Event{Kind: KindTextDelta, ID: "t", Text: delta})
		}
	}
}
