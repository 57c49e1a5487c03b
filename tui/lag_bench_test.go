package tui

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/fakedaemon"
)

// stampUI is maria's backend, noting when the update that brings the
// final reply of the long session was handed to the stream hub.
type stampUI struct {
	*maria.Backend
	mu sync.Mutex
	at time.Time
}

func (b *stampUI) stamp(evs []events.Event) {
	for i := range evs {
		if strings.Contains(evs[i].Text, fakedaemon.LongSessionMarker) {
			b.mu.Lock()
			b.at = time.Now()
			b.mu.Unlock()
		}
	}
}

func (b *stampUI) Follow(ctx context.Context, id string, on func(client.Update)) error {
	return b.Backend.Follow(ctx, id, func(u client.Update) {
		on(u)
		b.stamp(u.Events)
	})
}

// BenchmarkReplayFinalReplyLag: a 10,000-event replay from the fake
// daemon over loopback, through maria's backend into the stream hub; it
// reports how long after the step that brings the final reply the batch
// carrying it goes to the UI (median, lag-ms) and the replay's batches.
func BenchmarkReplayFinalReplyLag(b *testing.B) {
	srv, info := longDaemon(b, 10_000)
	var lags []time.Duration
	batches := 0
	for b.Loop() {
		su := &stampUI{Backend: newMaria(b, srv.URL)}
		lag, n := replayLag(b, su, info.TaskID)
		lags = append(lags, lag)
		batches += n
	}
	slices.Sort(lags)
	b.ReportMetric(float64(lags[len(lags)/2])/1e6, "lag-ms")
	b.ReportMetric(float64(batches)/float64(len(lags)), "batches")
}

// replayLag attaches to taskID through su and returns the final reply's
// lag (see BenchmarkReplayFinalReplyLag) and the batches until then.
func replayLag(b *testing.B, su *stampUI, taskID string) (time.Duration, int) {
	ctx, cancel := context.WithCancel(context.Background())
	h := newStreamHub(ctx, su)
	defer h.wait()
	defer cancel()
	var s sink
	h.start(s.send)
	h.WatchTask(1, taskID)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		msgs, at := s.snapshot()
		batches := 0
		for i, m := range msgs {
			if m.Src == srcTask && len(m.Events) > 0 {
				batches++
			}
			for ev := range m.Events.All() {
				if strings.Contains(ev.Text, fakedaemon.LongSessionMarker) {
					su.mu.Lock()
					defer su.mu.Unlock()
					return at[i].Sub(su.at), batches
				}
			}
		}
		time.Sleep(time.Millisecond)
	}
	b.Fatal("the final reply never came")
	return 0, 0
}
