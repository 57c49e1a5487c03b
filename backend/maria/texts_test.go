package maria

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/internal/testproxy"
)

// countingTexts counts the texts it is asked to hold (and holds them on
// the heap).
type countingTexts struct{ n atomic.Int64 }

func (c *countingTexts) Bytes(n int) []byte {
	c.n.Add(1)
	return make([]byte, n)
}

// followTexts follows id until Synced with texts and returns the timeline
// and how many reconnects it took.
func followTexts(t *testing.T, base, id string, texts events.TextMemory) (*events.Timeline, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tl, reconn := events.NewTimeline(), 0
	err := open(t, base).FollowWith(ctx, id, FollowOptions{Texts: texts}, func(s Step) {
		if s.Reset {
			tl = events.NewTimeline()
		}
		for _, ev := range s.Events {
			tl.Apply(ev)
		}
		if s.State != nil && s.State.Phase == client.PhaseReconnecting {
			reconn++
		}
		if s.Synced {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("FollowWith: %v", err)
	}
	return tl, reconn
}

// TestFollowTextsFirstReplayOnly: FollowOptions.Texts takes the tools'
// outputs of the first connection's replay and no others (a reconnect
// replays what was delivered: those texts would be dropped, and memory
// handed to Texts is kept), and the timeline is the one without it.
func TestFollowTextsFirstReplayOnly(t *testing.T) {
	d, base := fake(t, 1000)
	info, err := d.AddLongSession(fakedaemon.LongSession{Events: 300})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := followTexts(t, base, info.TaskID, nil)
	whole := &countingTexts{}
	tl, _ := followTexts(t, base, info.TaskID, whole)
	if got, want := jsonl(t, tl), jsonl(t, plain); got != want {
		t.Fatalf("the timeline with Texts differs from the one without")
	}
	all := whole.n.Load()
	if all < 20 {
		t.Fatalf("Texts held %d texts of a 300-event session: the test proves nothing", all)
	}
	// Cut after 100, 200, 300 events: four connections, which decode
	// the first part of the log several times.
	first := &countingTexts{}
	tl, reconn := followTexts(t, testproxy.Cut(t, base, 100, nil).URL+"/v1", info.TaskID, first)
	if reconn < 2 {
		t.Fatalf("%d reconnects: the test proves nothing", reconn)
	}
	if got, want := jsonl(t, tl), jsonl(t, plain); got != want {
		t.Fatalf("after %d reconnects the timeline with Texts differs", reconn)
	}
	if n := first.n.Load(); n == 0 || n >= all {
		t.Errorf("with %d reconnects Texts held %d texts; want some, fewer than the %d of the whole log", reconn, n, all)
	}
}
