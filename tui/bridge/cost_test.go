package bridge

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/backend/pynchy"
	"github.com/perch-tui/perch/backend/suna"
	fakepynchy "github.com/perch-tui/perch/fakedaemon/pynchy"
	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
	"github.com/perch-tui/perch/tui"
)

// runUI attaches the UI to a session through the bridge until ok holds
// for what it drew (ANSI stripped) or the deadline passes; it returns what
// it drew.
func runUI(t *testing.T, b backend.Backend, id string, ok func(string) bool) (string, bool) {
	t.Helper()
	out := &drawLog{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- tui.Run(ctx, New(b), tui.Config{TaskID: id, Theme: "dark", Getenv: func(string) string { return "" },
			Unsent: io.Discard}, tea.WithInput(nil), tea.WithOutput(out), tea.WithWindowSize(160, 40))
	}()
	var plain string
	met := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, s := out.snapshot()
		if plain = ansi.Strip(s); ok(plain) {
			met = true
			break
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
	return plain, met
}

// settle waits (a while) for the goroutines a UI leaves running for a
// moment after it returns to end: Bubble Tea's pending ticks and the
// regexp clock of the markdown highlighter. TestMain reports any that
// stay.
func settle(opt goleak.Option) {
	for range 10 { // Find itself retries for about a second
		if goleak.Find(opt) == nil {
			return
		}
	}
}

// TestStatusBarCost: the status bar shows a run's cost where the backend
// reports one (pynchy's result carries total_cost_usd: $0.0123) and
// tokens only where it does not (Suna's usage counts tokens).
func TestStatusBarCost(t *testing.T) {
	t.Run("pynchy", func(t *testing.T) {
		defer settle(goleak.IgnoreCurrent())
		s := fakepynchy.New(fakepynchy.Options{StepDelay: -1})
		defer s.Close()
		srv := httptest.NewServer(s.Handler())
		defer srv.Close()
		if err := s.Say("tui:main", "hello"); err != nil {
			t.Fatal(err)
		}
		for s.Active("tui:main") {
			time.Sleep(10 * time.Millisecond)
		}
		b, err := pynchy.Open(backend.Config{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		if !b.Capabilities().Cost {
			t.Fatal("pynchy should report cost")
		}
		if scr, ok := runUI(t, b, "tui:main", func(s string) bool { return strings.Contains(s, "$0.012") }); !ok {
			t.Fatalf("the status bar never showed the run's cost ($0.012); the UI drew:\n%s", scr)
		}
	})
	t.Run("suna", func(t *testing.T) {
		defer settle(goleak.IgnoreCurrent())
		s := fakesuna.New(fakesuna.Options{FrameDelay: -1})
		defer s.Close()
		srv := httptest.NewServer(s.Handler())
		defer srv.Close()
		tid, rid, err := s.Start("", "What is in my workspace?")
		if err != nil {
			t.Fatal(err)
		}
		for s.RunStatus(rid) == "running" {
			time.Sleep(10 * time.Millisecond)
		}
		b, err := suna.Open(backend.Config{URL: srv.URL + "/v1"})
		if err != nil {
			t.Fatal(err)
		}
		if b.Capabilities().Cost {
			t.Fatal("Suna reports no cost")
		}
		// The history's usage rows: 1200+1500 prompt, 60+140 completion.
		scr, ok := runUI(t, b, tid, func(s string) bool { return strings.Contains(s, "↑2.7k ↓200") })
		if !ok {
			t.Fatalf("the status bar never showed the thread's tokens; the UI drew:\n%s", scr)
		}
		if strings.Contains(scr, "$") {
			t.Fatalf("a cost shows for Suna:\n%s", scr)
		}
	})
}
