package tui

import (
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/events"
)

// frozenSession is a harness whose settled items are all in the spill
// file: the part of a long session a search reads in a command.
func frozenSession(t *testing.T, n int) *harness {
	t.Helper()
	var evs []events.Event
	for i, ev := range session(n) {
		evs = append(evs, ev)
		if i%8 == 7 {
			evs = append(evs, events.Event{Kind: events.KindPostConversation})
		}
	}
	hs := spillHarness(t, 100, 30, t.TempDir(), 1)
	hs.m.hotItems = 0
	hs.events(evs...)
	hs.key("esc") // from the composer to the transcript, where / searches
	if hs.m.tl.(*events.Timeline).Frozen() < n/2 {
		t.Fatalf("only %d items frozen", hs.m.tl.(*events.Timeline).Frozen())
	}
	return hs
}

// commit types a search and presses enter, returning the command that
// counts the matches instead of running it.
func commit(hs *harness, q string) tea.Cmd {
	hs.t.Helper()
	hs.key("/")
	hs.typ(q)
	_, cmd := hs.m.Update(keyMsg("enter"))
	if cmd == nil {
		hs.t.Fatalf("search %q: no command", q)
	}
	return cmd
}

// TestSearchCountsInACommand: enter hands the pass over the session to a
// command; until its answer the view answers keys (n says the search is
// running), and the answer then jumps to the match as before.
func TestSearchCountsInACommand(t *testing.T) {
	hs := frozenSession(t, 80)
	cmd := commit(hs, "question 8:")
	if !hs.m.search.pending || hs.m.search.matches != 0 {
		t.Fatalf("after enter: pending %v, %d matches", hs.m.search.pending, hs.m.search.matches)
	}
	hs.key("n")
	if !strings.Contains(hs.m.flash.text, "searching") {
		t.Fatalf("n while the search runs: flash %q", hs.m.flash.text)
	}
	hs.send(cmd())
	if hs.m.search.pending || hs.m.search.matches != 1 {
		t.Fatalf("after the count: pending %v, %d matches", hs.m.search.pending, hs.m.search.matches)
	}
	hs.contains("question 8:")
	if !strings.Contains(hs.m.flash.text, "1 match in 1 item") {
		t.Fatalf("flash %q", hs.m.flash.text)
	}
}

// TestNewerSearchSupersedes: the answer of a search that a newer one
// replaced, or that a restarted timeline made stale, is dropped.
func TestNewerSearchSupersedes(t *testing.T) {
	hs := frozenSession(t, 80)
	old := commit(hs, "question 8:")
	newer := commit(hs, "question 12:")
	hs.send(old())
	if !hs.m.search.pending || hs.m.search.matches != 0 {
		t.Fatalf("an older search's count was taken: pending %v, %d matches", hs.m.search.pending, hs.m.search.matches)
	}
	hs.send(newer())
	if hs.m.search.query != "question 12:" || hs.m.search.matches != 1 {
		t.Fatalf("query %q, %d matches", hs.m.search.query, hs.m.search.matches)
	}
	stale := commit(hs, "question 16:")
	hs.m.restartTimeline()
	hs.send(stale())
	if hs.m.search.matches != 0 || hs.m.search.query != "" {
		t.Fatalf("a count from before the restart was taken: query %q, %d matches", hs.m.search.query, hs.m.search.matches)
	}
}

// TestSearchPassBesideEvents: the command's pass reads the spill file
// while the UI goes on applying and freezing events (run with -race).
func TestSearchPassBesideEvents(t *testing.T) {
	hs := frozenSession(t, 120)
	cmd := commit(hs, "question")
	var msg tea.Msg
	var wg sync.WaitGroup
	wg.Go(func() { msg = cmd() })
	more := session(240)[120:]
	for i := range more {
		hs.events(more[i], events.Event{Kind: events.KindPostConversation})
	}
	wg.Wait()
	hs.send(msg)
	if hs.m.search.matches != 30 {
		t.Fatalf("%d items match, want the 30 questions there were at enter", hs.m.search.matches)
	}
}
