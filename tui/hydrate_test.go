package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/fakedaemon"
)

// longDaemon serves one long, finished session over loopback HTTP.
func longDaemon(tb testing.TB, n int) (*fakedaemon.Server, fakedaemon.LongSessionInfo) {
	tb.Helper()
	d := fakedaemon.New(fakedaemon.Options{Seed: 1})
	info, err := d.AddLongSession(fakedaemon.LongSession{Events: n})
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := d.Start("")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = srv.Close(); _ = d.Close() })
	return srv, info
}

// readReplay reads the task's stream until its last frame's id went by, the
// way curl does in the end-to-end benchmark: the baseline.
func readReplay(tb testing.TB, url string, info fakedaemon.LongSessionInfo) int64 {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/task/"+info.TaskID+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	want := []byte(info.LastEventID)
	buf := make([]byte, 256<<10)
	var n int64
	var tail []byte
	for {
		k, err := resp.Body.Read(buf)
		n += int64(k)
		tail = append(tail, buf[:k]...)
		if bytes.Contains(tail, want) {
			return n
		}
		if len(tail) > len(want) {
			tail = append(tail[:0], tail[len(tail)-len(want):]...)
		}
		if err != nil {
			tb.Fatalf("replay ended after %d bytes without %s: %v", n, info.LastEventID, err)
		}
	}
}

// screenWatch is the program's output; it notes when text first appears on
// screen, and the time of every write (a flushed frame) on writes, when
// that is not nil.
type screenWatch struct {
	want   string
	seen   chan struct{}
	once   sync.Once
	writes chan time.Time
}

func (s *screenWatch) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(s.want)) || strings.Contains(ansi.Strip(string(p)), s.want) {
		s.once.Do(func() { close(s.seen) })
	}
	if s.writes != nil {
		select {
		case s.writes <- time.Now():
		default:
		}
	}
	return len(p), nil
}

// newMaria is maria's backend at url, as the UI shows it.
func newMaria(tb testing.TB, url string) *maria.Backend {
	tb.Helper()
	cl, err := maria.NewClient(url)
	if err != nil {
		tb.Fatal(err)
	}
	return maria.New(cl)
}

// attachUntil runs the real program on maria's backend against url and
// returns how long the final reply took to reach the screen.
func attachUntil(tb testing.TB, url string, info fakedaemon.LongSessionInfo, want string) time.Duration {
	cl := newMaria(tb, url)
	out := &screenWatch{want: want, seen: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := run(ctx, cl, Config{TaskID: info.TaskID, Theme: "dark", Getenv: func(string) string { return "" }, Unsent: io.Discard},
			tea.WithInput(nil), tea.WithOutput(out), tea.WithWindowSize(120, 40))
		done <- err
	}()
	var took time.Duration
	select {
	case <-out.seen:
		took = time.Since(start)
	case err := <-done:
		cancel()
		tb.Fatalf("the program ended before %q was on screen: %v", want, err)
	case <-time.After(2 * time.Minute):
		cancel()
		tb.Fatalf("%q not on screen after 2 minutes", want)
	}
	cancel()
	if err := <-done; err != nil {
		tb.Fatal(err)
	}
	return took
}

// BenchmarkAttach measures a whole attach in process, over loopback HTTP:
// the real client, stream hub, model and Bubble Tea renderer, from the
// start of the program to the session's final reply on screen; next to it
// the baseline, reading the same replay's bytes (what curl does).
// x-read is the attach's time over the baseline's; cpu-ms is the
// processor time of the whole process per attach (the daemon's serving
// included), steadier than wall time on a busy machine.
func BenchmarkAttach(b *testing.B) {
	for _, n := range []int{1000, 10_000} {
		srv, info := longDaemon(b, n)
		var base time.Duration
		b.Run(fmt.Sprintf("baseline-read-replay/events=%d", n), func(b *testing.B) {
			start := time.Now()
			for b.Loop() {
				b.SetBytes(readReplay(b, srv.URL, info))
			}
			base = time.Since(start) / time.Duration(b.N)
		})
		b.Run(fmt.Sprintf("attach-to-final-reply/events=%d", n), func(b *testing.B) {
			var total time.Duration
			cpu0 := processCPU()
			for b.Loop() {
				total += attachUntil(b, srv.URL, info, fakedaemon.LongSessionMarker)
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms")
			if base > 0 {
				b.ReportMetric(float64(total/time.Duration(b.N))/float64(base), "x-read")
			}
		})
	}
}

// BenchmarkKeyToScreen types into the composer (type), or pages the
// transcript up and down (page), of the real program attached to a
// 10,000-event session (keys written to its input as a terminal would, a
// pause of two frames between them so each key is a lone one) and times
// each key until the program writes the frame that shows it: input
// parsing, Update, View, the wait for the renderer's flush and the flush
// itself. p50-ms and p99-ms are the latencies, cpu-ms the process's
// processor time per key (the pauses' few idle ticks included); ns/op
// includes the pauses.
func BenchmarkKeyToScreen(b *testing.B) {
	b.Run("type", func(b *testing.B) {
		benchKeyToScreen(b, nil, [][]byte{[]byte("x"), {0x7f}}) // backspace: the composer stays short
	})
	b.Run("page", func(b *testing.B) {
		// esc moves the focus to the transcript; two PageUps leave room
		// below, so that each PageUp and PageDown moves the view.
		benchKeyToScreen(b, [][]byte{{0x1b}, []byte("\x1b[5~"), []byte("\x1b[5~")}, [][]byte{[]byte("\x1b[5~"), []byte("\x1b[6~")})
	})
}

func benchKeyToScreen(b *testing.B, setup, keySeq [][]byte) {
	srv, info := longDaemon(b, 10_000)
	cl := newMaria(b, srv.URL)
	in, keys := io.Pipe()
	out := &screenWatch{want: fakedaemon.LongSessionMarker, seen: make(chan struct{}), writes: make(chan time.Time, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = run(ctx, cl, Config{TaskID: info.TaskID, Theme: "dark", Getenv: func(string) string { return "" }, Unsent: io.Discard},
			tea.WithInput(in), tea.WithOutput(out), tea.WithWindowSize(120, 40))
	}()
	defer func() { cancel(); _ = keys.Close(); <-done }()
	select {
	case <-out.seen:
	case <-time.After(2 * time.Minute):
		b.Fatal("the final reply never reached the screen")
	}
	// Let the replay's last frames settle.
	for quiet := false; !quiet; {
		select {
		case <-out.writes:
		case <-time.After(300 * time.Millisecond):
			quiet = true
		}
	}
	for _, key := range setup {
		if _, err := keys.Write(key); err != nil {
			b.Fatal(err)
		}
		select {
		case <-out.writes:
		case <-time.After(10 * time.Second):
			b.Fatalf("setup key %q did not reach the screen within 10 s", key)
		}
		for quiet := false; !quiet; {
			select {
			case <-out.writes:
			case <-time.After(100 * time.Millisecond):
				quiet = true
			}
		}
	}
	var lat []time.Duration
	i := 0
	cpu0 := processCPU()
	for b.Loop() {
		time.Sleep(2 * frameInterval)
		select {
		case <-out.writes:
		default:
		}
		key := keySeq[i%len(keySeq)]
		i++
		start := time.Now()
		if _, err := keys.Write(key); err != nil {
			b.Fatal(err)
		}
		select {
		case at := <-out.writes:
			lat = append(lat, at.Sub(start))
		case <-time.After(10 * time.Second):
			b.Fatal("a key did not reach the screen within 10 s")
		}
	}
	cpu := processCPU() - cpu0
	slices.Sort(lat)
	b.ReportMetric(float64(cpu)/1e6/float64(len(lat)), "cpu-ms")
	b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
}

// TestAttachShowsTheFinalReply: the final reply of a long replay reaches
// the screen of the real program.
func TestAttachShowsTheFinalReply(t *testing.T) {
	srv, info := longDaemon(t, 300)
	attachUntil(t, srv.URL, info, fakedaemon.LongSessionMarker)
	waitProgramGone(t)
}

// waitProgramGone waits until no goroutine of a Bubble Tea program is
// left: a finished program leaves its pending commands (a timer of up to
// heldSettled's 700 ms) running until they fire, and the goleak checks of
// the tests after this one must not see them.
func waitProgramGone(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(5 * time.Second); ; {
		n := runtime.Stack(buf, true)
		if !bytes.Contains(buf[:n], []byte("charm.land/bubbletea/v2.")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a Bubble Tea goroutine is left 5 s after the program ended:\n%s", buf[:n])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReplayOverTheBackendInFewBatches: a 10,000-event replay that comes
// through maria's backend (decoded on its stream's goroutine, over real
// loopback) reaches the UI in a few large batches, as the raw frames did
// through the UI's own pipeline: far fewer than one per frame.
func TestReplayOverTheBackendInFewBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10,000-event replay")
	}
	srv, info := longDaemon(t, 10_000)
	ctx, cancel := context.WithCancel(context.Background())
	h := newStreamHub(ctx, newMaria(t, srv.URL))
	defer h.wait()
	defer cancel()
	var s sink
	h.start(s.send)
	start := time.Now()
	h.WatchTask(1, info.TaskID)
	seen := func() bool {
		msgs, _ := s.snapshot()
		for _, m := range msgs {
			for ev := range m.Events.All() {
				if strings.Contains(ev.Text, fakedaemon.LongSessionMarker) {
					return true
				}
			}
		}
		return false
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !seen() {
		if time.Now().After(deadline) {
			t.Fatal("the final reply never came")
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	msgs, _ := s.snapshot()
	batches, n, size := 0, 0, 0
	for _, m := range msgs {
		if m.Src == srcTask && len(m.Events) > 0 {
			batches++
			n += m.Events.Len()
			for ev := range m.Events.All() {
				size += eventBytes(ev)
			}
		}
	}
	t.Logf("%d events (%d MB) in %d batches over %v", n, size>>20, batches, elapsed)
	// Doubling holds give about log2(d/50ms)+d/400ms batches, and a batch
	// holds at most batchBytesMax; a burst broken up by every pause of the
	// decoder would give one per frame.
	if limit := 8 + int(elapsed/(100*time.Millisecond)) + size/batchBytesMax; batches > limit {
		t.Fatalf("%d batches in %v (limit %d): the replay was not held together", batches, elapsed, limit)
	}
}
