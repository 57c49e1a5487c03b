package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/perch-tui/perch/board"
)

// twoOnOneHost is a board of two daemons of one machine, named by their
// URLs (two --url), and one the config named.
func twoOnOneHost() *fakeBoard {
	a, b := "http://127.0.0.1:8090/v1", "http://127.0.0.1:8091/v1"
	m := board.NewModel([]board.SourceState{
		{Name: a, System: "maria", URL: a},
		{Name: b, System: "maria", URL: b},
		{Name: "work", System: "suna", URL: "https://suna.example.com/v1"},
	})
	for _, s := range m.Sources() {
		s.Conn = board.Live
		m.SetConn(s)
	}
	at := func(d time.Duration) time.Time { return fixedNow.Add(-d) }
	m.SetSessions(a, []board.Session{
		{ID: "a1b2c3d4-0001", Name: "Fix the parser at EOF and add a regression test for the empty file", Status: board.Idle, Updated: at(20 * time.Minute)},
	}, at(time.Hour))
	m.SetSessions(b, []board.Session{
		{ID: "b2c3d4e5-0002", Name: "deploy to staging", Status: board.Generating, Updated: at(30 * time.Minute), Queued: 1},
	}, at(time.Hour))
	m.SetSessions("work", []board.Session{
		{ID: "thread-7f3a", Name: "release notes", Status: board.Idle, Updated: at(10 * time.Minute), Tokens: 48210, Cost: 0.42, HasCost: true},
	}, at(time.Hour))
	m.SetSessions(a, []board.Session{
		{ID: "a1b2c3d4-0001", Name: "Fix the parser at EOF and add a regression test for the empty file", Status: board.Idle, Updated: at(time.Minute),
			LastReply: "The parser now stops at EOF; the new test covers an empty file.", Tokens: 12034},
	}, at(time.Minute))
	m.SetHeld(b, map[string]board.Held{"b2c3d4e5-0002": {Held: 2}}, at(time.Minute))
	return &fakeBoard{m: m}
}

// The board reads at a glance: column heads say what the marks and
// numbers are, the sources of one machine read apart (host:port), the
// name takes the width it needs.
func TestGoldenBoardTwoSourcesOneHost(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			hs, _ := boardHarness(t, sz[0], sz[1], twoOnOneHost())
			checkFrame(t, hs.m)
			v := hs.view()
			for _, want := range []string{"127.0.0.1:8090", "127.0.0.1:8091", "NEW", "NAME", "SOURCE", "QUE·HLD"} {
				if !strings.Contains(v, want) {
					t.Errorf("the board lacks %q:\n%s", want, v)
				}
			}
			rows := strings.Split(v, "\n")
			rows = rows[:len(rows)-3] // the selected session's detail names its source's URL whole
			if strings.Contains(strings.Join(rows, "\n"), "http://127") {
				t.Errorf("a source shown by its URL's start:\n%s", v)
			}
			if sz[0] == 200 && !strings.Contains(v, "Fix the parser at EOF and add a regression test for the empty file") {
				t.Errorf("the name is cut with room to spare:\n%s", v)
			}
			golden.RequireEqual(t, v)
		})
	}
}

// The board's help lists the board's keys first.
func TestBoardHelpListsTheBoardFirst(t *testing.T) {
	hs, _ := boardHarness(t, 120, 40, threeSources())
	hs.key("?")
	v := hs.view()
	b, tr := strings.Index(v, "board"), strings.Index(v, "transcript: move")
	if b < 0 || tr >= 0 && tr < b {
		t.Errorf("the board's keys are not first in its help:\n%s", v)
	}
}
