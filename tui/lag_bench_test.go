package tui

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/fakedaemon"
)

// plainUI hides a backend's hints (HintedStreamer): the UI keeps its
// timing rule.
type plainUI struct{ Backend }

// stampUI notes when the step that brings the final reply of the long
// session was handed to the stream hub.
type stampUI struct {
	mariaUI
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

func (b *stampUI) StreamTaskSteps(ctx context.Context, id string, onStep func([]events.Event, backend.Backlog), onState func(connState)) error {
	return b.mariaUI.StreamTaskSteps(ctx, id, func(evs []events.Event, bl backend.Backlog) {
		onStep(evs, bl)
		b.stamp(evs)
	}, onState)
}

func (b *stampUI) StreamTaskEvents(ctx context.Context, id string, onEvent func(events.Event), onState func(connState)) error {
	return b.mariaUI.StreamTaskEvents(ctx, id, func(ev events.Event) {
		onEvent(ev)
		b.stamp([]events.Event{ev})
	}, onState)
}

// BenchmarkReplayFinalReplyLag: a 10,000-event replay from the fake
// daemon over loopback, through maria's backend into the stream hub; it
// reports how long after the step that brings the final reply the batch
// carrying it goes to the UI (median, lag-ms) and the replay's batches,
// with the backend's hints (hinted) and without (timing: the burst
// window's guess).
func BenchmarkReplayFinalReplyLag(b *testing.B) {
	srv, info := longDaemon(b, 10_000)
	for _, hinted := range []bool{true, false} {
		name := "hinted"
		if !hinted {
			name = "timing"
		}
		b.Run(name, func(b *testing.B) {
			var lags []time.Duration
			batches := 0
			for b.Loop() {
				su := &stampUI{mariaUI: newMariaUI(b, srv.URL)}
				var be Backend = su
				if !hinted {
					be = plainUI{su}
				}
				lag, n := replayLag(b, be, su, info.TaskID)
				lags = append(lags, lag)
				batches += n
			}
			slices.Sort(lags)
			b.ReportMetric(float64(lags[len(lags)/2])/1e6, "lag-ms")
			b.ReportMetric(float64(batches)/float64(len(lags)), "batches")
		})
	}
}

// replayLag attaches to taskID through be and returns the final reply's
// lag (see BenchmarkReplayFinalReplyLag) and the batches until then.
func replayLag(b *testing.B, be Backend, su *stampUI, taskID string) (time.Duration, int) {
	ctx, cancel := context.WithCancel(context.Background())
	h := newStreamHub(ctx, be)
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
