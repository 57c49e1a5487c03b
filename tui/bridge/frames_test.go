package bridge

import (
	"context"
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/backend/suna"
	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
	"github.com/perch-tui/perch/tui"
)

// drawLog is the UI's terminal: it keeps what the renderer wrote and when.
// Bubble Tea's renderer writes a frame with one Write, and only a frame
// that changed.
type drawLog struct {
	mu     sync.Mutex
	b      strings.Builder
	writes []time.Time
}

func (d *drawLog) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writes = append(d.writes, time.Now())
	d.b.Write(p)
	return len(p), nil
}

func (d *drawLog) snapshot() ([]time.Time, string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Time(nil), d.writes...), d.b.String()
}

// TestSunaRunDrawnOncePerFrame: the UI attached through the bridge to a
// Suna run of thousands of small frames (the fake's bench run, read at
// full speed) draws at most about once per frame budget (60 Hz) while the
// run comes in, not once per frame of the stream, and ends with the run's
// final reply drawn.
func TestSunaRunDrawnOncePerFrame(t *testing.T) {
	frames := 6000
	if testing.Short() {
		frames = 2000
	}
	defer settle(goleak.IgnoreCurrent())
	s := fakesuna.New(fakesuna.Options{FrameDelay: -1, Hold: true})
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	tid, rid, err := s.Start("", "bench "+strconv.Itoa(frames))
	if err != nil {
		t.Fatal(err)
	}
	for n := -1; n != s.Frames(rid) || n <= 0; {
		n = s.Frames(rid)
		time.Sleep(100 * time.Millisecond)
	}
	streamed := s.Frames(rid)
	b, err := suna.Open(backend.Config{URL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	out := &drawLog{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- tui.Run(ctx, New(b), tui.Config{TaskID: tid, Theme: "dark", Getenv: func(string) string { return "" },
			Unsent: io.Discard}, tea.WithInput(nil), tea.WithOutput(out), tea.WithWindowSize(120, 40))
	}()
	// The run ends once the UI opened its stream.
	deadline := time.Now().Add(60 * time.Second)
	for s.Requests("GET /agent-run/{id}/stream") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the UI never opened the run's stream")
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.Release()
	for s.RunStatus(rid) == "running" {
		if time.Now().After(deadline) {
			t.Fatal("the run did not end")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Wait for the screen to go quiet: the run's end, the history read
	// again, the last frame drawn.
	last, quiet := 0, time.Now()
	for time.Since(quiet) < 1500*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatal("the screen never went quiet")
		}
		time.Sleep(20 * time.Millisecond)
		if w, _ := out.snapshot(); len(w) != last {
			last, quiet = len(w), time.Now()
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("tui.Run: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("tui.Run did not return after ctx ended")
	}
	writes, screen := out.snapshot()
	if len(writes) < 2 {
		t.Fatalf("%d draws", len(writes))
	}
	// The budget: one draw per frame interval over the time the UI drew,
	// and a few more (the first frames, the spinner's ticks on a slow
	// machine, the history's reset at the run's end).
	span := writes[len(writes)-1].Sub(writes[0])
	budget := int(span/(16*time.Millisecond)) + 20
	t.Logf("%d stream frames, %d draws in %v (budget %d)", streamed, len(writes), span.Round(time.Millisecond), budget)
	if len(writes) > budget {
		t.Errorf("%d draws in %v: more than one per frame budget (at most %d)", len(writes), span, budget)
	}
	if len(writes) > streamed/10 {
		t.Errorf("%d draws for %d stream frames: frames are not coalesced", len(writes), streamed)
	}
	// Drawn as cell diffs: the reply's words are there, if not in one run.
	if plain := ansi.Strip(screen); !strings.Contains(plain, "The end.") {
		t.Errorf("the final reply was never drawn")
	}
}
