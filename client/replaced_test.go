package client

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// sessionsAt is a backend whose Session answers from a list of creation
// times, one per call (the last one repeats); nothing else is used.
type sessionsAt struct {
	Backend
	mu      sync.Mutex
	created []time.Time
}

func (b *sessionsAt) Session(_ context.Context, id string) (events.Task, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.created[0]
	if len(b.created) > 1 {
		b.created = b.created[1:]
	}
	return events.Task{ID: id, Created: c}, nil
}

func live() Step { return Step{Update: Update{State: &sse.ConnState{Phase: sse.PhaseLive}}} }

func text(s string) Step {
	return Step{Update: Update{Events: []events.Event{{Kind: events.KindNotice, Text: s}}}}
}

// FollowSame starts over, with a Reset and a notice, when a new
// connection finds another session under the id, and only then.
func TestFollowSameStartsOverOnAnotherSession(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	tests := []struct {
		name    string
		task    events.Task
		created []time.Time
		want    []string // texts of the steps' events; "RESET" for a Reset
	}{
		{"same session after a reconnect", events.Task{ID: "a", Created: t0}, []time.Time{t0},
			[]string{"old", "again"}},
		{"another session after a reconnect", events.Task{ID: "a", Created: t0}, []time.Time{t1},
			[]string{"old", "RESET", "Session a was replaced", "old", "new"}},
		{"no creation times: never replaced", events.Task{ID: "a"}, []time.Time{{}},
			[]string{"old", "again"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &sessionsAt{created: tc.created}
			runs := 0
			follow := func(ctx context.Context, on func(Step)) error {
				runs++
				on(live())
				on(text("old"))
				if runs > 1 {
					on(text("new"))
					return nil
				}
				on(live()) // reconnected
				on(text("again"))
				return nil
			}
			var got []string
			err := FollowSame(context.Background(), b, tc.task, follow, func(s Step) {
				if s.Reset {
					got = append(got, "RESET")
				}
				for _, ev := range s.Events {
					txt := ev.Text
					if ev.NoticeKind == NoticeReplaced {
						txt = txt[:len("Session a was replaced")]
					}
					got = append(got, txt)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
			}
		})
	}
}
