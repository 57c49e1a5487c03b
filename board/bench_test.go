//go:build unix

package board_test

import (
	"context"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/fakedaemon"
	fakepynchy "github.com/perch-tui/perch/fakedaemon/pynchy"
	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
)

func serve(b *testing.B, s func(context.Context, net.Listener) error) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s(ctx, ln) }()
	b.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String()
}

func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIdleBoard50 watches 50 idle sessions over 3 sources (maria's
// daemon stream, Suna polled every second, pynchy's global stream) and
// reports the CPU the whole process (servers included) spends per second
// of watching, as a percentage of one core.
func BenchmarkIdleBoard50(b *testing.B) {
	d := fakedaemon.New(fakedaemon.Options{Speed: 100})
	msrv, err := d.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { msrv.Close() })
	for i := 0; i < 25; i++ {
		if _, err := d.AddStoppedTask(fmt.Sprintf("task %d", i)); err != nil {
			b.Fatal(err)
		}
	}
	s := fakesuna.New(fakesuna.Options{FrameDelay: -1})
	b.Cleanup(s.Close)
	for i := 0; i < 24; i++ {
		if _, _, err := s.Start("", fmt.Sprintf("thread %d", i)); err != nil {
			b.Fatal(err)
		}
	}
	sURL := serve(b, s.Serve) + "/v1"
	p := fakepynchy.New(fakepynchy.Options{})
	b.Cleanup(func() { p.Close() })
	pURL := serve(b, p.Serve)

	var sources []board.Source
	for _, src := range []struct{ name, url string }{{client.Maria, msrv.URL}, {client.Suna, sURL}, {client.Pynchy, pURL}} {
		sources = append(sources, board.Source{Name: src.name, System: src.name, URL: src.url,
			Open: func(ctx context.Context) (client.Backend, error) {
				return registry.Open(ctx, src.name, client.Config{URL: src.url})
			}})
	}
	ctx, cancel := context.WithCancel(context.Background())
	bd := board.Start(ctx, sources, board.Options{StateDir: b.TempDir()})
	b.Cleanup(func() { cancel(); bd.Wait() })
	for {
		_, rows := bd.Snapshot(board.Filter{})
		if len(rows) == 50 {
			break
		}
		<-bd.Updated()
	}
	time.Sleep(2 * time.Second) // Suna's runs settle
	b.ResetTimer()
	var used, wall time.Duration
	for i := 0; i < b.N; i++ {
		c0, t0 := cpu(), time.Now()
		time.Sleep(3 * time.Second)
		used += cpu() - c0
		wall += time.Since(t0)
	}
	b.ReportMetric(100*float64(used)/float64(wall), "%cpu")
}
