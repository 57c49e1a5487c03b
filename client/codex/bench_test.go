package codex

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// benchHome makes n rollouts of about size bytes each under a new
// $CODEX_HOME: the TUI recording's head, a middle that is a hole (sparse:
// the list never reads it, and the disk need not hold it), and the
// recording's last turn as the tail.
func benchHome(b *testing.B, n int, size int64) string {
	b.Helper()
	lines := tuiLines(b)
	head := bytes.Join(lines[:lineIndex(b, lines, `"input_text","text":"Make a file`)+1], nil)
	tail := append([]byte("\n"), bytes.Join(lines[lineIndex(b, lines, `"follow-up at idle"`)-1:], nil)...)
	home := b.TempDir()
	for i := 0; i < n; i++ {
		day := filepath.Join(home, "sessions", "2026", fmt.Sprintf("%02d", 1+i/450), fmt.Sprintf("%02d", 1+i%28))
		if err := os.MkdirAll(day, 0o755); err != nil {
			b.Fatal(err)
		}
		id := fmt.Sprintf("01a24e52-%04x-70a3-bb7d-f46f05a00227", i)
		f, err := os.Create(filepath.Join(day, "rollout-2026-12-07T02-25-31-"+id+".jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		f.Write(bytes.ReplaceAll(head, []byte(tuiThread), []byte(id)))
		f.Seek(size-int64(len(tail)), 0)
		f.Write(tail)
		f.Close()
	}
	return home
}

// BenchmarkList lists 5,000 rollouts of 600 KB (3 GB): cold (a new
// backend reads every head and tail) and again (only stats).
func BenchmarkList(b *testing.B) {
	home := benchHome(b, 5000, 600<<10)
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		var before, after runtime.MemStats
		var r0, r1 syscall.Rusage
		for i := 0; i < b.N; i++ {
			runtime.ReadMemStats(&before)
			syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
			l := open(b, home)
			ts, err := l.Sessions(ctx)
			if err != nil || len(ts) != 5000 || ts[0].Name == "" {
				b.Fatalf("%d sessions, %v", len(ts), err)
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
			cpu := time.Duration(r1.Utime.Nano()-r0.Utime.Nano()) + time.Duration(r1.Stime.Nano()-r0.Stime.Nano())
			b.ReportMetric(float64(cpu.Milliseconds()), "cpu-ms/op") // the wall time suffers a loaded machine
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "MB-alloc/op")
			b.ReportMetric(float64(after.HeapInuse)/(1<<20), "MB-heap")
		}
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		b.ReportMetric(float64(ru.Maxrss)/1024, "MB-maxrss")
	})
	b.Run("again", func(b *testing.B) {
		l := open(b, home)
		if _, err := l.Sessions(ctx); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := l.Sessions(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAppend measures how long an appended line takes to come out of
// Follow (write to the update that holds it), over 200 lines 20 ms apart.
func BenchmarkAppend(b *testing.B) {
	for i := 0; i < b.N; i++ {
		home := codexHome(b)
		path := rolloutPath(home, tuiThread)
		lines := tuiLines(b)
		writeLines(b, path, lines)
		l := open(b, home)
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan time.Time, 1000)
		synced := make(chan struct{})
		go l.Follow(ctx, tuiThread, func(u client.Update) {
			if u.Synced {
				close(synced)
			}
			for _, ev := range u.Events {
				if ev.Kind == events.KindUserMessage {
					got <- time.Now()
				}
			}
		})
		<-synced
		for len(got) > 0 {
			<-got
		}
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		var lat []time.Duration
		for j := 0; j < 200; j++ {
			line := fmt.Sprintf(`{"timestamp":"2026-12-07T02:30:00.000Z","type":"response_item","payload":{"type":"message","id":"m%d","role":"user","content":[{"type":"input_text","text":"line %d"}]}}`+"\n", j, j)
			t0 := time.Now()
			f.WriteString(line)
			select {
			case t1 := <-got:
				lat = append(lat, t1.Sub(t0))
			case <-time.After(5 * time.Second):
				b.Fatal("a line never came out")
			}
			time.Sleep(20 * time.Millisecond)
		}
		f.Close()
		cancel()
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
		b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "ms-p95")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "ms-max")
	}
}

// BenchmarkIdleWatch: the CPU WatchSessions takes over 100 idle sessions,
// each held by a Codex (its lock), for 10 s.
func BenchmarkIdleWatch(b *testing.B) {
	home := benchHome(b, 100, 64<<10)
	if err := os.MkdirAll(filepath.Join(home, "thread-writer-locks"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		holdLock(b, home, fmt.Sprintf("01a24e52-%04x-70a3-bb7d-f46f05a00227", i))
	}
	for i := 0; i < b.N; i++ {
		l := open(b, home)
		ctx, cancel := context.WithCancel(context.Background())
		first := make(chan struct{}, 1)
		go l.WatchSessions(ctx, func([]events.Task) {
			select {
			case first <- struct{}{}:
			default:
			}
		})
		<-first
		var r0, r1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
		start := time.Now()
		time.Sleep(10 * time.Second)
		syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		wall := time.Since(start)
		cancel()
		cpu := time.Duration(r1.Utime.Nano()-r0.Utime.Nano()) + time.Duration(r1.Stime.Nano()-r0.Stime.Nano())
		b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "%cpu")
	}
}

// BenchmarkWatchState measures how long a turn's start or end in one of
// 5,000 rollouts takes to change the list WatchSessions hands out (the
// board's state), over 40 changes 50 ms apart.
func BenchmarkWatchState(b *testing.B) {
	home := benchHome(b, 5000, 600<<10)
	// The session that changes: live (its lock held) and idle.
	id := fmt.Sprintf("01a24e52-%04x-70a3-bb7d-f46f05a00227", 0)
	if err := os.MkdirAll(filepath.Join(home, "thread-writer-locks"), 0o755); err != nil {
		b.Fatal(err)
	}
	holdLock(b, home, id)
	paths, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*-"+id+".jsonl"))
	if len(paths) != 1 {
		b.Fatalf("%d rollouts of %s", len(paths), id)
	}
	for i := 0; i < b.N; i++ {
		l := open(b, home)
		ctx, cancel := context.WithCancel(context.Background())
		states := make(chan string, 100)
		go l.WatchSessions(ctx, func(ts []events.Task) {
			for _, t := range ts {
				if t.ID == id {
					states <- t.Status
				}
			}
		})
		if s := <-states; s != events.StatusIdle {
			b.Fatalf("starts %s", s)
		}
		f, _ := os.OpenFile(paths[0], os.O_APPEND|os.O_WRONLY, 0)
		var lat []time.Duration
		for j := 0; j < 40; j++ {
			line, want := `{"type":"event_msg","payload":{"type":"task_started"}}`+"\n", events.StatusGenerating
			if j%2 == 1 {
				line, want = `{"type":"event_msg","payload":{"type":"task_complete"}}`+"\n", events.StatusIdle
			}
			t0 := time.Now()
			f.WriteString(line)
			for s := range states {
				if s == want {
					break
				}
			}
			lat = append(lat, time.Since(t0))
			time.Sleep(50 * time.Millisecond)
		}
		f.Close()
		cancel()
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
		b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "ms-p95")
	}
}
