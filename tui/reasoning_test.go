package tui

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/tools"
)

// reasoningTask is a task whose turns are reasoning and tool calls only,
// as most turns of Claude Code, codex and maria are, with each system's
// edit tool.
func reasoningTask(t *testing.T, w, h int) *harness {
	t.Helper()
	hs := attached(t, w, h)
	live := connState{Phase: sse.PhaseLive, Since: fixedNow}
	think := func(id, thinking string, calls ...events.ToolCall) events.Event {
		return events.Event{Kind: events.KindAssistantMessage, ID: id, Thinking: thinking, ToolCalls: calls, Created: fixedNow}
	}
	evs := []events.Event{
		user("u1", "The lexer drops the last byte. Fix it and note it in the CHANGELOG."),
		think("a1", "next() stops one byte early: the loop compares pos+1 with len(in).\nThe fix is to compare pos.",
			events.ToolCall{ID: "c1", Name: tools.ClaudeEdit}),
		preTool("p1", "c1", tools.ClaudeEdit, `{"file_path":"lexer/lexer.go","old_string":"\tif l.pos+1 >= len(l.in) {\n\t\treturn 0\n\t}","new_string":"\tif l.pos >= len(l.in) {\n\t\treturn 0\n\t}"}`),
		postTool("q1", "c1", tools.ClaudeEdit, "The file lexer/lexer.go has been updated successfully.", false),
		think("a2", "Codex would apply the same fix as a file change.", events.ToolCall{ID: "c2", Name: tools.CodexApplyPatch}),
		preTool("p2", "c2", tools.CodexApplyPatch, `{"changes":[{"path":"lexer/lexer_test.go","kind":"add","diff":"func TestEOF(t *testing.T) {}\n"}]}`),
		postTool("q2", "c2", tools.CodexApplyPatch, "add lexer/lexer_test.go", false),
		think("a3", "Now the CHANGELOG entry.", events.ToolCall{ID: "c3", Name: tools.MariaWrite}),
		preTool("p3", "c3", tools.MariaWrite, `{"path":"CHANGELOG.md","content":"- Fix the last byte at EOF.\n"}`),
		postTool("q3", "c3", tools.MariaWrite, "Content written to file at path: /home/alice/src/parser/CHANGELOG.md", false),
	}
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live, Events: chunksOf(evs)})
	hs.key("esc") // the transcript
	return hs
}

// TestGoldenReasoning: every turn's reasoning shows, turns of tool calls
// only included, above each system's edit with its file and diff; R hides
// all reasoning and shows it again.
func TestGoldenReasoning(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			hs := reasoningTask(t, sz[0], sz[1])
			if sz[1] >= 50 { // all of it fits
				hs.contains("💭 next() stops one byte early")
			}
			hs.contains("💭 Now the CHANGELOG entry.")
			checkFrame(t, hs.m)
			golden.RequireEqual(t, hs.view())
		})
		t.Run(fmt.Sprintf("hidden/%dx%d", sz[0], sz[1]), func(t *testing.T) {
			hs := reasoningTask(t, sz[0], sz[1])
			hs.key("R")
			hs.lacks("💭")
			hs.contains("reasoning hidden — R shows it")
			checkFrame(t, hs.m)
			golden.RequireEqual(t, hs.view())
			hs.key("R")
			hs.contains("💭 Now the CHANGELOG entry.")
		})
	}
}
