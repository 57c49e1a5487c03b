package board_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// scripted is a backend whose session list the test hands out, and whose
// run summaries it counts.
type scripted struct {
	client.Backend // nil: only what the board uses is implemented
	lists          chan []events.Task
	mu             sync.Mutex
	calls          map[string]int
	sum            map[string]events.RunSummary
	err            map[string]error
}

func (s *scripted) Name() string { return "scripted" }
func (s *scripted) URL() string  { return "http://scripted" }

func (s *scripted) WatchSessions(ctx context.Context, on func([]events.Task)) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case l := <-s.lists:
			on(l)
		}
	}
}

func (s *scripted) RunSummary(_ context.Context, id string) (events.RunSummary, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[id]++
	return s.sum[id], s.err[id]
}

func (s *scripted) count(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[id]
}

func tasks(st ...string) []events.Task {
	ids := []string{"a", "b"}
	out := make([]events.Task, len(st))
	for i, s := range st {
		out[i] = events.Task{ID: ids[i], Name: "task " + ids[i], Status: s, Updated: time.Unix(1000, 0)}
	}
	return out
}

// A run's end is summarized once (not on every list that follows), and
// what the summary says reaches the row and the changes: a failed run is
// one change, generating → failed, with its reason; a summary that cannot
// be read is the row's note, and the run's end is reported as the list
// said.
func TestBoardSummarizesEachRunEndOnce(t *testing.T) {
	be := &scripted{lists: make(chan []events.Task), calls: map[string]int{},
		sum: map[string]events.RunSummary{"a": {End: events.RunEndFailed, Reason: "HttpError 401: No auth credentials found",
			LastReply: "Let me look.\nmore", Usage: events.Usage{TotalTokens: 1234, CostUSD: 0.5, HasCost: true}, HasUsage: true}},
		err: map[string]error{"b": errors.New("the server went away")}}
	changes := make(chan board.Change, 16)
	ctx, cancel := context.WithCancel(context.Background())
	bd := board.Start(ctx, []board.Source{{Name: "src", URL: "http://scripted",
		Open: func(context.Context) (client.Backend, error) { return be, nil }}},
		board.Options{OnChange: func(c board.Change) { changes <- c }})
	defer func() { cancel(); bd.Wait() }()

	be.lists <- tasks(events.StatusGenerating, events.StatusGenerating)
	be.lists <- tasks(events.StatusIdle, events.StatusIdle)
	got := map[string]board.Change{}
	for len(got) < 2 {
		c := <-changes
		if _, dup := got[c.Session]; dup {
			t.Fatalf("a second change for %s: %+v", c.Session, c)
		}
		got[c.Session] = c
	}
	if c := got["a"]; c.Old != board.Generating || c.New != board.Failed || c.Reason != board.RunFailed {
		t.Errorf("a: %s → %s (%s), want generating → failed (failed)", c.Old, c.New, c.Reason)
	}
	if c := got["b"]; c.Old != board.Generating || c.New != board.Idle {
		t.Errorf("b: %s → %s, want generating → idle", c.Old, c.New)
	}
	// The same list again, several times: no new summary, no change, and
	// the failed run stays failed although the list says idle.
	for range 3 {
		be.lists <- tasks(events.StatusIdle, events.StatusIdle)
	}
	be.lists <- tasks(events.StatusIdle, events.StatusIdle) // the board took the ones before
	_, rows := bd.Snapshot(board.Filter{})
	byID := map[string]board.Row{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	a, b := byID["a"], byID["b"]
	if a.Status != board.Failed || a.Detail != "HttpError 401: No auth credentials found" || a.LastReply != "Let me look." ||
		a.Tokens != 1234 || !a.HasCost || a.Cost != 0.5 {
		t.Errorf("row a: %+v", a)
	}
	if b.Status != board.Idle || b.Note == "" {
		t.Errorf("row b: %+v, want idle with a note", b)
	}
	if n, m := be.count("a"), be.count("b"); n != 1 || m != 1 {
		t.Errorf("summaries read: a %d, b %d; want 1 each", n, m)
	}
	select {
	case c := <-changes:
		t.Errorf("a change from a repeated list: %+v", c)
	default:
	}
	// A second run: read again, once.
	be.lists <- tasks(events.StatusGenerating, events.StatusIdle)
	if c := <-changes; c.Session != "a" || c.New != board.Generating {
		t.Errorf("change %+v, want a → generating", c)
	}
	be.lists <- tasks(events.StatusIdle, events.StatusIdle)
	if c := <-changes; c.Session != "a" || c.Old != board.Generating || c.New != board.Failed {
		t.Errorf("change %+v, want a generating → failed", c)
	}
	if n := be.count("a"); n != 2 {
		t.Errorf("summaries of a: %d, want 2 (one per run end)", n)
	}
}
