package chrome

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/styles"
)

// A local CLI's session shows its whole session's tokens and cost apart
// from the last run's, under a head that says so, in its row and in the
// selected session's line; an unknown cost is "$?", never $0; a board
// without such sessions has no such column.
func TestBoardSessionUsage(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	rows := []board.Row{
		{Source: "claude-code", System: "claude-code", ID: "a1", Name: "fix the build", Status: board.Idle, Updated: now,
			Tokens: 1200, Cost: 0.01, HasCost: true, SessionTokens: 1_234_567, SessionCost: 3.4, HasSessionCost: true},
		{Source: "codex", System: "codex", ID: "b2", Name: "unpriced", Status: board.Idle, Updated: now, SessionTokens: 5000},
	}
	c := New(styles.Dark)
	lines, _ := c.Board(BoardList{Rows: rows, Total: 2}, ListScreen{Width: 160, Height: 12, Now: now})
	screen := ansi.Strip(strings.Join(lines, "\n"))
	for _, want := range []string{"RUN TOKENS/$", "SESSION TOK/$", "1.2k $0.01", "1.2M $3.40", "5k $?", "session 1.2M $3.40"} {
		if !strings.Contains(screen, want) {
			t.Errorf("no %q in\n%s", want, screen)
		}
	}
	rows[0].SessionTokens, rows[0].HasSessionCost, rows[1].SessionTokens = 0, false, 0
	lines, _ = c.Board(BoardList{Rows: rows, Total: 2}, ListScreen{Width: 160, Height: 12, Now: now})
	if screen := ansi.Strip(strings.Join(lines, "\n")); strings.Contains(screen, "SESSION") || strings.Contains(screen, "session ") {
		t.Errorf("a board without session figures shows them:\n%s", screen)
	}
}
