package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
)

// BenchmarkFollowAppend: how long a line appended to a followed
// transcript takes to reach the follower's callback (p50, p95, max as
// metrics). The goal is 250 ms to the screen at p95.
func BenchmarkFollowAppend(b *testing.B) {
	dir := b.TempDir()
	var killed atomic.Bool
	l := testLocal(dir, &killed)
	id := "1c2d3e4f-0000-4000-8000-00000000abcd"
	path := filepath.Join(dir, "projects", "-work", id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	line := `{"type":"user","sessionId":"` + id + `","cwd":"/work","message":{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}}` + "\n"
	appendFile(b, path, line)
	got := make(chan time.Time, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go l.Follow(ctx, id, func(u client.Update) {
		if len(u.Events) > 0 {
			got <- time.Now()
		}
	})
	<-got
	lags := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		at := time.Now()
		appendFile(b, path, line)
		lags = append(lags, (<-got).Sub(at))
	}
	b.StopTimer()
	slices.Sort(lags)
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	b.ReportMetric(ms(lags[len(lags)/2]), "p50-ms")
	b.ReportMetric(ms(lags[len(lags)*95/100]), "p95-ms")
	b.ReportMetric(ms(lags[len(lags)-1]), "max-ms")
}

// BenchmarkSessions lists the config directory PERCH_BENCH_CLAUDE_DIR
// (made by testdata/bench-local.sh; skipped without it): the first
// listing of a process (every head read) and the next ones (heads kept).
func BenchmarkSessions(b *testing.B) {
	dir := os.Getenv("PERCH_BENCH_CLAUDE_DIR")
	if dir == "" {
		b.Skip("PERCH_BENCH_CLAUDE_DIR is not set (testdata/bench-local.sh makes one)")
	}
	for _, first := range []bool{true, false} {
		name := "again"
		if first {
			name = "first"
		}
		b.Run(name, func(b *testing.B) {
			be, err := OpenLocal(dir)
			if err != nil {
				b.Fatal(err)
			}
			l := be.(*Local)
			if !first {
				l.Sessions(context.Background())
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if first {
					l.heads = map[string]headInfo{}
				}
				if _, err := l.Sessions(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
