package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

var firstTasks = []events.Task{{ID: "t-1", Name: "the given task", Status: events.StatusIdle}}

// TestInitTakesAListThatIsIn: a list already in when Bubble Tea starts
// (the probe's, or a prefetch that answered during the terminal setup) is
// in the model when Init returns, so the first frame at the terminal's
// size shows it, and nobody asks the backend for it again; a prefetch
// still under way is waited for by a command, and until it answers the
// list says it is loading, not that there are no tasks.
func TestInitTakesAListThatIsIn(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tt := range []struct {
		name     string
		prefetch func(client.Backend) *tasksPrefetch
		inAtInit bool
		calls    int    // Tasks calls in all
		want     string // on the first frame when the list is in at Init
	}{
		{"the caller's list", func(client.Backend) *tasksPrefetch { return knownTasks(firstTasks) }, true, 0, "the given task"},
		{"an empty list is a list", func(client.Backend) *tasksPrefetch { return knownTasks([]events.Task{}) }, true, 0, "no tasks yet"},
		{"a prefetch that answered", func(b client.Backend) *tasksPrefetch {
			p := prefetchTasks(ctx, b)
			p.wait()
			return p
		}, true, 1, "the given task"},
		{"a prefetch under way", func(b client.Backend) *tasksPrefetch { return prefetchTasks(ctx, b) }, false, 1, ""},
		{"no prefetch", func(client.Backend) *tasksPrefetch { return nil }, false, 1, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := &gatedBackend{fakeBackend: fakeBackend{tasks: firstTasks},
				release: make(chan struct{}), calls: make(chan struct{}, 4)}
			if tt.inAtInit && tt.calls > 0 {
				close(g.release) // the prefetch must be able to answer before Init
			}
			cfg := Config{Theme: "dark", Getenv: func(string) string { return "" }, Now: func() time.Time { return fixedNow }}
			cfg.tasks = tt.prefetch(g)
			m := New(ctx, g, cfg, nil)
			cmd := m.Init()
			m.resize(80, 20)
			screen := ansi.Strip(m.View().Content)
			if tt.inAtInit != m.list.answered {
				t.Fatalf("list answered at Init: %v, want %v\n%s", m.list.answered, tt.inAtInit, screen)
			}
			if tt.inAtInit {
				// Init may count perch's own held messages (the outbox,
				// not the backend); it must not ask the backend again.
				if cmd != nil {
					if !isClosed(g.release) {
						close(g.release) // a wrong ask must return and be counted, not hang
					}
					if b, ok := cmd().(tea.BatchMsg); ok {
						for _, c := range b {
							if c != nil {
								c()
							}
						}
					}
				}
				if len(g.calls) != tt.calls {
					t.Fatalf("Init asks for the list it already has (%d calls)", len(g.calls))
				}
				if !strings.Contains(screen, tt.want) {
					t.Fatalf("the first frame lacks %q:\n%s", tt.want, screen)
				}
			} else {
				if !strings.Contains(screen, "loading tasks…") || strings.Contains(screen, "no tasks yet") {
					t.Fatalf("before the list's answer the list must say it is loading:\n%s", screen)
				}
				if tt.calls > 0 && !isClosed(g.release) {
					close(g.release)
				}
				msg := cmd()
				m.Update(msg)
				if screen = ansi.Strip(m.View().Content); !strings.Contains(screen, "the given task") {
					t.Fatalf("after the answer the list is shown:\n%s", screen)
				}
			}
			if len(g.calls) != tt.calls {
				t.Errorf("Tasks called %d times, want %d", len(g.calls), tt.calls)
			}
			cfg.tasks.wait()
		})
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestFirstFrameShowsTheGivenList runs the real program with the list the
// caller read (Config.Tasks) and a backend that would never answer for it:
// the first frame with content already has the list, and the backend is
// not asked for it.
func TestFirstFrameShowsTheGivenList(t *testing.T) {
	g := &gatedBackend{release: make(chan struct{}), calls: make(chan struct{}, 4)}
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := run(ctx, g, Config{Tasks: firstTasks, Theme: "dark", Getenv: func(string) string { return "" }, Unsent: &out},
			tea.WithInput(nil), tea.WithOutput(&out), tea.WithWindowSize(100, 30))
		done <- err
	}()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("run did not return")
		}
	}()
	waitFor(t, func() bool { return strings.Contains(ansi.Strip(out.String()), "the given task") })
	if s := ansi.Strip(out.String()); strings.Contains(s, "loading tasks") || strings.Contains(s, "no tasks yet") {
		t.Errorf("a frame without the list was drawn first:\n%s", s)
	}
	if len(g.calls) != 0 {
		t.Errorf("the backend was asked for the list it was given (%d calls)", len(g.calls))
	}
}
