package pynchy_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/pynchy"
	fake "github.com/perch-tui/perch/fakedaemon/pynchy"
)

// seed runs n exchanges in the chat, one after another.
func seed(tb testing.TB, srv *fake.Server, n int) {
	for i := 0; i < n; i++ {
		if err := srv.Say(chat, "list the files"); err != nil {
			tb.Fatal(err)
		}
		for srv.Active(chat) {
			time.Sleep(100 * time.Microsecond)
		}
	}
}

// BenchmarkFollow measures, beside the time to read the history alone
// (ms/fetch, what curl would take),, for a chat of `runs` finished exchanges
// (about 7 history rows each), the time to the first Synced (history
// loaded and delivered) and the time from a new message to the Synced that
// ends its run (which includes the run-end reload and comparison).
func BenchmarkFollow(b *testing.B) {
	for _, runs := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("%druns", runs), func(b *testing.B) {
			fs := startFake(b, fake.Options{StepDelay: -1})
			seed(b, fs.srv, runs)
			bk, err := pynchy.Open(client.Config{URL: fs.url})
			if err != nil {
				b.Fatal(err)
			}
			var load, run, fetch time.Duration
			for i := 0; i < b.N; i++ {
				// The baseline: reading the history as curl would.
				start := time.Now()
				resp, err := http.Get(fs.url + "/api/messages?limit=1000000&jid=" + chat)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				fetch += time.Since(start)

				ctx, cancel := context.WithCancel(context.Background())
				synced := make(chan struct{}, 64)
				start = time.Now()
				done := make(chan struct{})
				go func() {
					defer close(done)
					_ = bk.Follow(ctx, chat, func(u client.Update) {
						if u.Synced {
							synced <- struct{}{}
						}
					})
				}()
				<-synced // the history
				load += time.Since(start)
				<-synced // the first connect's reload
				start = time.Now()
				if err := fs.srv.Say(chat, "list the files"); err != nil {
					b.Fatal(err)
				}
				<-synced // the run's end, checked against the history
				run += time.Since(start)
				cancel()
				<-done
			}
			b.ReportMetric(float64(fetch.Microseconds())/float64(b.N)/1000, "ms/fetch")
			b.ReportMetric(float64(load.Microseconds())/float64(b.N)/1000, "ms/load")
			b.ReportMetric(float64(run.Microseconds())/float64(b.N)/1000, "ms/run")
			b.ReportMetric(float64(fs.srv.Rows(chat)), "rows")
		})
	}
}
