package maria

import (
	"context"
	"testing"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/sse"
)

// longSession serves a finished session of n events and returns the
// backend, the task id and how many events its replay decodes to.
func longSession(b *testing.B, n int) (*Backend, string, int) {
	b.Helper()
	d := fakedaemon.New(fakedaemon.Options{Speed: 1000, Seed: 7})
	srv, err := d.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	info, err := d.AddLongSession(fakedaemon.LongSession{Events: n})
	if err != nil {
		b.Fatal(err)
	}
	be, err := OpenWith(client.Config{URL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	// Count once what a replay decodes to.
	total := 0
	ctx, cancel := context.WithCancel(context.Background())
	dec := NewDecoder()
	_ = be.Client().StreamTask(ctx, info.TaskID, func(f events.Frame) {
		total += len(dec.Decode(f))
		if total >= info.Events {
			cancel()
		}
	}, nil)
	cancel()
	return be, info.TaskID, total
}

// BenchmarkReplayRawStream: the client's stream and maria's decoder, as
// the CLI and the TUI use them today, until the last event of a 10,000
// event replay is decoded.
func BenchmarkReplayRawStream(b *testing.B) {
	be, id, total := longSession(b, 10000)
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		dec := NewDecoder()
		n := 0
		_ = be.Client().StreamTaskActivity(ctx, id, func(f events.Frame) {
			n += len(dec.Decode(f))
			if n >= total {
				cancel()
			}
		}, func(s sse.ConnState) {
			if s.Phase == sse.PhaseLive {
				dec.Reconnected()
			}
		}, &sse.Activity{})
		cancel()
	}
}

// BenchmarkReplayFollow: the same replay through Backend.Follow (the
// replay-end rule, an Update per frame).
func BenchmarkReplayFollow(b *testing.B) {
	be, id, total := longSession(b, 10000)
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		_ = be.Follow(ctx, id, func(u client.Update) {
			n += len(u.Events)
			if n >= total {
				cancel()
			}
		})
		cancel()
	}
}
