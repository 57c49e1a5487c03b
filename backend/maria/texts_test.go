package maria

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

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

// heapTexts leaves every text to the heap.
type heapTexts struct{}

func (heapTexts) Bytes(int) []byte { return nil }

// followTexts follows id until Synced with texts and returns the timeline
// and how many reconnects it took.
func followTexts(t *testing.T, base, id string, texts events.TextMemory) (*events.Timeline, int) {
	tl, reconn, _ := followOutputs(t, base, id, texts)
	return tl, reconn
}

// followOutputs is followTexts that also returns the tools' outputs in the
// order they came.
func followOutputs(t *testing.T, base, id string, texts events.TextMemory) (*events.Timeline, int, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tl, reconn := events.NewTimeline(), 0
	var outputs []string
	err := open(t, base).FollowWith(ctx, id, FollowOptions{Texts: texts}, func(s Step) {
		if s.Reset {
			tl = events.NewTimeline()
		}
		for _, ev := range s.Events {
			tl.Apply(ev)
			if ev.Tool != nil && ev.Tool.Result != nil && ev.Tool.Result.Text != "" {
				outputs = append(outputs, ev.Tool.Result.Text)
			}
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
	return tl, reconn, outputs
}

// TestFollowTextsFirstReplayOnly: FollowOptions.Texts takes the tools'
// outputs of the first connection's replay and no others (a reconnect
// replays what was delivered: those texts are dropped, and a chunk is kept
// whole while any of its texts is), and the timeline is the one with every
// text on the heap, with the default arena too.
func TestFollowTextsFirstReplayOnly(t *testing.T) {
	d, base := fake(t, 1000)
	info, err := d.AddLongSession(fakedaemon.LongSession{Events: 300})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := followTexts(t, base, info.TaskID, heapTexts{})
	packed, _, outputs := followOutputs(t, base, info.TaskID, nil) // the default: textmem.New
	// The default packs them: most outputs end where the next begins.
	next := 0
	for i := 1; i < len(outputs); i++ {
		end := unsafe.Add(unsafe.Pointer(unsafe.StringData(outputs[i-1])), len(outputs[i-1]))
		if end == unsafe.Pointer(unsafe.StringData(outputs[i])) {
			next++
		}
	}
	if len(outputs) < 20 || next < len(outputs)/2 {
		t.Errorf("the default Texts left %d of %d outputs next to the one before: not packed", next, len(outputs))
	}
	whole := &countingTexts{}
	tl, _ := followTexts(t, base, info.TaskID, whole)
	if got, want := jsonl(t, tl), jsonl(t, plain); got != want {
		t.Fatalf("the timeline with Texts differs from the one without")
	}
	if got, want := jsonl(t, packed), jsonl(t, plain); got != want {
		t.Fatalf("the timeline with the default Texts differs from the one without")
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
