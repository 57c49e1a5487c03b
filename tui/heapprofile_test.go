package tui

import (
	"context"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/internal/spill"
)

// TestHeapAtFinalReply writes a heap profile of the real program attached
// to the fake daemon's 10,000-event long session, taken once the final
// reply is on screen: where the TUI's memory goes (docs/performance.md,
// "The TUI's memory"). It runs only when PERCH_HEAP_PROFILE names the file
// to write. The daemon runs in this process unless PERCH_URL and
// PERCH_TASK name one started apart (`perch fake-daemon --long-session
// 10000`), which keeps its 50 MB of frames out of the numbers.
//
//	PERCH_HEAP_PROFILE=/tmp/heap.pb.gz go test ./tui -run TestHeapAtFinalReply -v
//	go tool pprof -sample_index=inuse_space -top /tmp/heap.pb.gz
func TestHeapAtFinalReply(t *testing.T) {
	path := os.Getenv("PERCH_HEAP_PROFILE")
	if path == "" {
		t.Skip("set PERCH_HEAP_PROFILE to the profile's file")
	}
	defer func(r int) { runtime.MemProfileRate = r }(runtime.MemProfileRate)
	runtime.MemProfileRate = 4096
	url, info := os.Getenv("PERCH_URL"), fakedaemon.LongSessionInfo{TaskID: os.Getenv("PERCH_TASK")}
	if url == "" || info.TaskID == "" {
		var srv *fakedaemon.Server
		srv, info = longDaemon(t, 10_000)
		url = srv.URL
	}
	out := &screenWatch{want: fakedaemon.LongSessionMarker, seen: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := run(ctx, newMaria(t, url), Config{TaskID: info.TaskID, Theme: "dark", Getenv: func(string) string { return "" }, Unsent: io.Discard, Spill: spill.Open},
			tea.WithInput(nil), tea.WithOutput(out), tea.WithWindowSize(120, 40))
		done <- err
	}()
	select {
	case <-out.seen:
	case err := <-done:
		t.Fatalf("the program ended before the final reply was on screen: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the final reply was not on screen after 2 minutes")
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("at the final reply: heap %.1f MB in use (%.1f MB in spans), %.1f MB from the OS, %d collections",
		float64(ms.HeapAlloc)/1e6, float64(ms.HeapInuse)/1e6, float64(ms.Sys)/1e6, ms.NumGC)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("live after a collection: %.1f MB (%.1f MB in spans)", float64(ms.HeapAlloc)/1e6, float64(ms.HeapInuse)/1e6)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
}
