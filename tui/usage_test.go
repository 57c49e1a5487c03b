package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
)

// The status bar's tokens and cost are the last run's, as the board and
// perch tasks --all count them (events.LastRun), and say so; the whole
// session's follow, said as such.
func TestStatusBarTokensAreTheBoardsRun(t *testing.T) {
	reply := func(id string, in, out int64, cost float64) events.Event {
		ev := assistant(id, "ok")
		ev.Usage = &events.Usage{InputTokens: in, OutputTokens: out, CostUSD: cost, HasCost: true}
		return ev
	}
	evs := []events.Event{
		user("u1", "one"), runStart("r1", fixedNow), reply("a1", 1000, 100, 0.10), runEnd("p1"),
		user("u2", "two"), runStart("r2", fixedNow), reply("a2", 2000, 200, 0.20), reply("a3", 3000, 300, 0.30), runEnd("p2"),
	}
	hs := newHarness(t, 200, 30, Config{TaskID: "task-1"})
	hs.events(evs...)
	tl := events.NewTimeline()
	for _, ev := range evs {
		tl.Apply(ev)
	}
	board := events.LastRun(tl.Items())
	want := "run " + tokens(board.Tokens()) + " tok " + events.CostText(board.Usage.CostUSD)
	line := ansi.Strip(hs.m.statusLine())
	if want != "run 5.5k tok $0.5" || !strings.Contains(line, want) {
		t.Errorf("status bar %q, want %q", line, want)
	}
	if !strings.Contains(line, "session ↑6k ↓600 $0.6") {
		t.Errorf("status bar %q lacks the session's totals", line)
	}
}
