package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// Whole-screen goldens on the plain text of View (ansi.Strip): they pin the
// layout, not the colours. Regenerate with `go test ./tui/ -run Golden
// -update` and review the diff.

var goldenSizes = [][2]int{{80, 24}, {120, 40}}

func goldenTask(t *testing.T, w, h int) *harness { return goldenTaskWith(t, w, h, nil) }

// goldenTaskWith is goldenTask with an outbox; with one, the daemon
// refuses connections to messages (a sent message stays kept).
func goldenTaskWith(t *testing.T, w, h int, ob *Outbox) *harness {
	hs := attachedWith(t, w, h, ob)
	if ob != nil {
		hs.b.sendErr = errors.New("connection refused")
	}
	hs.run(hs.m.loadTaskCmd(hs.m.gen, "task-1"))
	live := connState{Phase: sse.PhaseLive, Since: fixedNow}
	var out strings.Builder
	for i := 1; i <= 14; i++ {
		fmt.Fprintf(&out, "ok  \tgithub.com/acme/parser/pkg%d\t0.0%ds\n", i, i%10)
	}
	evs := []events.Event{
		{Kind: events.KindModelLoaded, ID: "ml", Model: "anthropic/claude-sonnet-4.5"},
		user("u1", "The parser fails on inputs that end without a newline. Can you find out why and fix it?"),
		runStart("r1", fixedNow.Add(-83*time.Second)),
		assistant("a1", "I'll start by running the test-suite to see what fails."),
		preTool("p1", "c1", "execute_command", `{"command":"go test ./..."}`),
		postTool("q1", "c1", "execute_command", out.String(), false),
		preTool("p2", "c2", "read_file", `{"path":"lexer/lexer.go"}`),
		postTool("q2", "c2", "read_file", "open lexer/lexer.go: no such file or directory", true),
		assistant("a2", "The lexer lives in `internal/lex`. The bug is in **`next()`**: it stops one byte early when the input has no trailing newline."),
		preTool("p3", "c3", "execute_command", `{"command":"go test ./internal/lex -run TestEOF"}`),
		queueSnap(
			events.QueuedMessage{ID: "q1", Text: "also add a regression test\nthat covers CRLF input"},
			events.QueuedMessage{ID: "q2", Text: "then update the CHANGELOG", WebSearch: true},
		),
		{Kind: events.KindTodoUpdated, ID: "td", Todos: []events.Todo{
			{ID: "1", Content: "reproduce the failure", Status: "completed", Priority: "high"},
			{ID: "2", Content: "fix next() at EOF", Status: "in_progress", Priority: "high"},
			{ID: "3", Content: "add a regression test", Status: "pending", Priority: "medium"},
		}},
	}
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live, Events: chunksOf(evs)})
	return hs
}

func TestGoldenTaskView(t *testing.T) {
	for _, sz := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			hs := goldenTask(t, sz[0], sz[1])
			hs.typ("and keep the public API unchanged")
			checkFrame(t, hs.m)
			golden.RequireEqual(t, hs.view())
		})
	}
}

func TestGoldenTaskViewTranscriptFocus(t *testing.T) {
	for _, sz := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			hs := goldenTask(t, sz[0], sz[1])
			hs.key("ctrl+t") // todos
			hs.key("esc")    // focus the transcript
			hs.key("[")
			hs.key("[")
			hs.key("[") // the failing read_file
			hs.key("k")
			hs.events(assistant("a3", "new output arrives while scrolled up"))
			checkFrame(t, hs.m)
			golden.RequireEqual(t, hs.view())
		})
	}
}

func TestGoldenTaskList(t *testing.T) {
	for _, sz := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			hs := newHarness(t, sz[0], sz[1], Config{})
			live := connState{Phase: sse.PhaseLive, Since: fixedNow}
			hs.send(streamBatchMsg{Src: srcDaemon, State: &live, Tasks: []events.Task{
				{ID: "e3a1c9d2-0001", Name: "Fix the parser at EOF", Cwd: "/home/alice/src/parser", Status: events.StatusGenerating,
					Model: "anthropic/claude-sonnet-4.5", Created: fixedNow.Add(-5 * time.Minute),
					QueuedMessages: []events.QueuedMessage{{ID: "q1"}, {ID: "q2"}}},
				{ID: "1f2e3d4c-0002", Name: "Write the release notes for v2.3 — including the migration guide for users of the old configuration format", Cwd: "/home/alice/src/perch", Status: events.StatusIdle,
					Model: "openai/gpt-5.1", Created: fixedNow.Add(-3 * time.Hour)},
				{ID: "9a8b7c6d-0003", Name: "重构日志模块 (wide characters)", Cwd: "/srv/projects/logging", Status: events.StatusStopped, Created: fixedNow.Add(-50 * time.Hour)},
				{ID: "5e6f7a8b-0004", Cwd: "/tmp/scratch", Status: events.StatusIdle, Created: fixedNow.Add(-9 * 24 * time.Hour)},
			}})
			hs.key("j")
			checkFrame(t, hs.m)
			golden.RequireEqual(t, hs.view())
		})
	}
}

func TestGoldenHelp(t *testing.T) {
	hs := goldenTask(t, 120, 40)
	hs.key("esc")
	hs.key("?")
	checkFrame(t, hs.m)
	golden.RequireEqual(t, hs.view())
}
