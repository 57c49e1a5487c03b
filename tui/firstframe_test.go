package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/events"
)

// takeHurried reports whether hurry was called since the last view or
// check, and clears it.
func (g *renderGate) takeHurried() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.hurried
	g.hurried = false
	return h
}

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
		prefetch func(backend.Backend) *tasksPrefetch
		inAtInit bool
		calls    int    // Tasks calls in all
		want     string // on the first frame when the list is in at Init
	}{
		{"the caller's list", func(backend.Backend) *tasksPrefetch { return knownTasks(firstTasks) }, true, 0, "the given task"},
		{"an empty list is a list", func(backend.Backend) *tasksPrefetch { return knownTasks([]events.Task{}) }, true, 0, "no tasks yet"},
		{"a prefetch that answered", func(b backend.Backend) *tasksPrefetch {
			p := prefetchTasks(ctx, b)
			p.wait()
			return p
		}, true, 1, "the given task"},
		{"a prefetch under way", func(b backend.Backend) *tasksPrefetch { return prefetchTasks(ctx, b) }, false, 1, ""},
		{"no prefetch", func(backend.Backend) *tasksPrefetch { return nil }, false, 1, ""},
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
				if cmd != nil {
					t.Fatal("Init asks for the list it already has")
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

// TestFirstPaintHurriesTheGate: the first frame at the terminal's size and
// the first with the task list are flushed at once (the gate is hurried),
// every other frame is paced by the frame-rate cap as before.
func TestFirstPaintHurriesTheGate(t *testing.T) {
	ctx := context.Background()
	cfg := Config{Theme: "dark", Getenv: func(string) string { return "" }, Now: func() time.Time { return fixedNow }}
	m := New(ctx, &fakeBackend{}, cfg, nil)
	g := &renderGate{find: func() (*time.Ticker, bool) { return nil, false }}
	m.gate = g
	steps := []struct {
		name  string
		do    func()
		hurry bool
	}{
		{"no size yet", func() {}, false},
		{"the size", func() { m.Update(tea.WindowSizeMsg{Width: 80, Height: 20}) }, true},
		{"the same screen", func() {}, false},
		{"a key before the list", func() { m.Update(keyMsg("down")) }, false},
		{"the list", func() { m.Update(tasksLoadedMsg{tasks: firstTasks}) }, true},
		{"a key", func() { m.Update(keyMsg("down")) }, false},
		{"the list again", func() { m.Update(tasksLoadedMsg{tasks: firstTasks}) }, false},
		{"a new size", func() { m.Update(tea.WindowSizeMsg{Width: 90, Height: 20}) }, false},
	}
	for _, s := range steps {
		s.do()
		m.View()
		if got := g.takeHurried(); got != s.hurry {
			t.Errorf("%s: hurried %v, want %v", s.name, got, s.hurry)
		}
	}

	// Attached at start: the task view is the content.
	m = New(ctx, &fakeBackend{}, Config{TaskID: "t-1", Theme: "dark", Getenv: cfg.Getenv, Now: cfg.Now}, nil)
	m.gate = g
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 20})
	m.View()
	if !g.takeHurried() {
		t.Error("the first frame of a task view at its size was not hurried")
	}
}

// TestRenderGateHurriedViewKicks: a view within a frame interval of the
// last kick kicks again when hurried, and only that one.
func TestRenderGateHurriedViewKicks(t *testing.T) {
	// Long enough that every view below comes within a frame of the last
	// kick, even on a loaded machine.
	const interval = 10 * time.Second
	g, n := kickingGate(t, interval, 5*time.Millisecond)
	seq := func() uint64 {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.kickSeq
	}
	g.viewed(true)
	first := seq()
	g.viewed(true)
	if seq() != first {
		t.Fatal("a view within a frame of the last kick kicked again")
	}
	g.hurry()
	g.viewed(true)
	if seq() != first+1 {
		t.Fatal("a hurried view within a frame of the last kick did not kick")
	}
	waitFor(t, func() bool { return n.Load() > 0 })
	g.viewed(true)
	if seq() != first+1 {
		t.Fatal("the view after a hurried one kicked: hurry must last one view")
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
