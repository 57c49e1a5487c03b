package tui

// The UI on each live system's own backend, over loopback against the
// fake servers: what it draws, and what follow and client.WatchSessions
// hand it.

import (
	"context"
	"errors"
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

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/client/pynchy"
	"github.com/perch-tui/perch/client/suna"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/fakedaemon"
	fakepynchy "github.com/perch-tui/perch/fakedaemon/pynchy"
	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
	"github.com/perch-tui/perch/internal/testproxy"
	"github.com/perch-tui/perch/sse"
)

// runUI attaches the UI to a session of b until ok holds
// for what it drew (ANSI stripped) or the deadline passes; it returns what
// it drew.
func runUI(t *testing.T, b client.Backend, id string, ok func(string) bool) (string, bool) {
	t.Helper()
	out := &drawLog{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, b, Config{TaskID: id, Theme: "dark", Getenv: func(string) string { return "" },
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

// noLeaks fails the test if goroutines started since opt was taken are
// still running once the UI returned; it waits (a while) for the ones a
// UI leaves running for a moment after it returns to end: Bubble Tea's
// pending ticks and the regexp clock of the markdown highlighter.
func noLeaks(t *testing.T, opt goleak.Option) {
	t.Helper()
	var err error
	for range 10 { // Find itself retries for about a second
		if err = goleak.Find(opt); err == nil {
			return
		}
	}
	t.Error(err)
}

// TestStatusBarCost: the status bar shows a run's cost where the backend
// reports one (pynchy's result carries total_cost_usd: $0.0123) and
// tokens only where it does not (Suna's usage counts tokens).
func TestStatusBarCost(t *testing.T) {
	t.Run("pynchy", func(t *testing.T) {
		defer noLeaks(t, goleak.IgnoreCurrent())
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
		b, err := pynchy.Open(client.Config{URL: srv.URL})
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
		defer noLeaks(t, goleak.IgnoreCurrent())
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
		b, err := suna.Open(client.Config{URL: srv.URL + "/v1"})
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

// TestSunaRunDrawnOncePerFrame: the UI attached through Suna's backend to a
// Suna run of thousands of small frames (the fake's bench run, read at
// full speed) draws at most about once per frame budget (60 Hz) while the
// run comes in, not once per frame of the stream, and ends with the run's
// final reply drawn.
func TestSunaRunDrawnOncePerFrame(t *testing.T) {
	frames := 6000
	if testing.Short() {
		frames = 2000
	}
	defer noLeaks(t, goleak.IgnoreCurrent())
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
	b, err := suna.Open(client.Config{URL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	out := &drawLog{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, b, Config{TaskID: tid, Theme: "dark", Getenv: func(string) string { return "" },
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

// fakeMaria starts maria's fake daemon on loopback behind a raw TCP proxy
// (which the test may stop and start again: the daemon going away and
// coming back) and returns maria's backend at the proxy.
func fakeMaria(t *testing.T, speed float64) (*fakedaemon.Daemon, *testproxy.TCP, client.Backend) {
	t.Helper()
	d := fakedaemon.New(fakedaemon.Options{Speed: speed, Seed: 11})
	srv, err := d.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); d.Close() })
	target := strings.TrimPrefix(strings.TrimSuffix(srv.URL, "/v1"), "http://")
	proxy := &testproxy.TCP{Addr: "127.0.0.1:0", Target: target}
	proxy.Start(t)
	t.Cleanup(proxy.Stop)
	b, err := maria.Open(client.Config{URL: "http://" + proxy.Addr + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	return d, proxy, b
}

// watched records what follow or client.WatchSessions handed to the UI.
type watched struct {
	mu     sync.Mutex
	lists  [][]events.Task
	phases []sse.Phase
	tl     *events.Timeline
}

func (w *watched) onTasks(ts []events.Task) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lists = append(w.lists, ts)
}

func (w *watched) onStep(evs []events.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range evs {
		if isResetEvent(&evs[i]) {
			w.tl = events.NewTimeline()
			continue
		}
		w.tl.Apply(evs[i])
	}
}

func (w *watched) onState(s sse.ConnState) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.phases = append(w.phases, s.Phase)
}

// until polls cond (under w's lock) until it holds, failing after a
// deadline generous enough for -race on a loaded machine.
func (w *watched) until(t *testing.T, what string, cond func(w *watched) bool) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		w.mu.Lock()
		ok := cond(w)
		w.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			w.mu.Lock()
			defer w.mu.Unlock()
			t.Fatalf("%s: not seen in time (phases %v, %d lists)", what, w.phases, len(w.lists))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (w *watched) lastList() []events.Task {
	if len(w.lists) == 0 {
		return nil
	}
	return w.lists[len(w.lists)-1]
}

func (w *watched) lastPhase() sse.Phase {
	if len(w.phases) == 0 {
		return sse.PhaseConnecting
	}
	return w.phases[len(w.phases)-1]
}

func find(ts []events.Task, id string) (events.Task, bool) {
	for _, t := range ts {
		if t.ID == id {
			return t, true
		}
	}
	return events.Task{}, false
}

// TestMariaInTheUI: maria shown through its backend keeps what the UI had
// on its own path. Over real loopback against the fake daemon: the
// offers (web search, no backend label), the task list live from
// the daemon stream (a created task appears and its status follows its
// run, without polling), the task's decoded events with the server
// queue's snapshots (a follow-up sent with web search while the agent
// runs shows queued, with its web flag), and cancel returning the queue.
func TestMariaInTheUI(t *testing.T) {
	d, _, br := fakeMaria(t, 2)
	if c := capsOf(br); c != (uiCaps{Send: true, Cancel: true, Create: true, WebSearch: true}) {
		t.Fatalf("capabilities %+v: want maria's whole set and no backend label", c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	list := &watched{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := client.WatchSessions(ctx, br, pollEvery, list.onTasks, list.onState); !errors.Is(err, context.Canceled) {
			t.Errorf("WatchSessions returned %v, want context.Canceled", err)
		}
	}()
	list.until(t, "the first (empty) list, live", func(w *watched) bool {
		return len(w.lists) > 0 && w.lastPhase() == sse.PhaseLive
	})

	created, err := br.Create(ctx, client.CreateRequest{Cwd: t.TempDir(), Name: "slow", Prompt: "Run the slow benchmark please."})
	if err != nil {
		t.Fatal(err)
	}
	id := created.ID
	list.until(t, "the created task, generating, in the watched list", func(w *watched) bool {
		tk, ok := find(w.lastList(), id)
		return ok && tk.Status == events.StatusGenerating && tk.Name == "slow"
	})

	task := &watched{tl: events.NewTimeline()}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := follow(ctx, br, id, task.onStep, task.onState); !errors.Is(err, context.Canceled) {
			t.Errorf("follow returned %v, want context.Canceled", err)
		}
	}()
	task.until(t, "the slow tool running", func(w *watched) bool {
		for _, it := range w.tl.Items() {
			if it.Kind == events.ItemTool && it.Tool.Status == events.ToolRunning {
				return w.lastPhase() == sse.PhaseLive
			}
		}
		return false
	})
	sent, err := br.Send(ctx, id, client.Message{Text: "and then search the web", WebSearch: true})
	if err != nil || !sent.Queued || sent.ID == "" {
		t.Fatalf("send while running: %+v %v", sent, err)
	}
	task.until(t, "the follow-up in the server queue, with its web flag", func(w *watched) bool {
		q := w.tl.Queue()
		return len(q) == 1 && q[0].Text == "and then search the web" && q[0].WebSearch
	})
	pending, err := br.Cancel(ctx, id)
	if err != nil || len(pending) != 1 || pending[0].Text != "and then search the web" {
		t.Fatalf("cancel: %+v %v", pending, err)
	}
	task.until(t, "the queue emptied and the run over", func(w *watched) bool {
		return len(w.tl.Queue()) == 0 && w.tl.Status() != events.RunGenerating
	})
	list.until(t, "the task no longer generating in the watched list", func(w *watched) bool {
		tk, ok := find(w.lastList(), id)
		return ok && tk.Status != events.StatusGenerating
	})
	if _, err := br.Cancel(ctx, id); !errors.Is(err, client.ErrNotRunning) {
		t.Fatalf("cancel when idle: %v, want client.ErrNotRunning", err)
	}
	if got := d.Received(id); len(got) != 2 {
		t.Fatalf("the daemon received %q, want the prompt and the follow-up once each", got)
	}
}

// TestMariaDaemonGoesAway: the task list's state follows maria's daemon
// stream: reconnecting while the daemon is gone, live again (with the
// list) when it is back; the task stream does the same and brings no
// duplicates after the reconnect's replay.
func TestMariaDaemonGoesAway(t *testing.T) {
	d, proxy, br := fakeMaria(t, 20)
	id, err := d.CreateTask(fakedaemon.CreateRequest{Cwd: t.TempDir(), Name: "hello", Message: "Say hello"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	list := &watched{}
	task := &watched{tl: events.NewTimeline()}
	wg.Add(2)
	go func() {
		defer wg.Done()
		_ = client.WatchSessions(ctx, br, pollEvery, list.onTasks, list.onState)
	}()
	go func() {
		defer wg.Done()
		_ = follow(ctx, br, id, task.onStep, task.onState)
	}()
	idle := func(w *watched) bool {
		tk, ok := find(w.lastList(), id)
		return ok && tk.Status == events.StatusIdle && w.lastPhase() == sse.PhaseLive
	}
	list.until(t, "the task idle in the live list", idle)
	task.until(t, "the reply, live", func(w *watched) bool {
		return w.tl.Status() == events.RunIdle && len(w.tl.Items()) >= 2 && w.lastPhase() == sse.PhaseLive
	})
	task.mu.Lock()
	items := len(task.tl.Items())
	task.mu.Unlock()
	lists := func() int { list.mu.Lock(); defer list.mu.Unlock(); return len(list.lists) }()

	proxy.Stop()
	list.until(t, "the task list reconnecting", func(w *watched) bool { return w.lastPhase() == sse.PhaseReconnecting })
	task.until(t, "the task stream reconnecting", func(w *watched) bool { return w.lastPhase() == sse.PhaseReconnecting })
	proxy.Start(t)
	list.until(t, "the task list live again, with a new list", func(w *watched) bool {
		return idle(w) && len(w.lists) > lists
	})
	task.until(t, "the task stream live again", func(w *watched) bool { return w.lastPhase() == sse.PhaseLive })
	cancel()
	wg.Wait()
	if n := len(task.tl.Items()); n != items {
		t.Fatalf("%d items after the reconnect, %d before: the replay was not dropped", n, items)
	}
}

// TestAgainstFakeSuna: over loopback HTTP, the UI offers what the live
// Suna backend can do (cancel and create), lists the fake's thread, and
// follows its history and run.
func TestAgainstFakeSuna(t *testing.T) {
	s := fakesuna.New(fakesuna.Options{FrameDelay: -1})
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	thread, _, err := s.Start("", "What is in my workspace?")
	if err != nil {
		t.Fatal(err)
	}
	b, err := suna.Open(client.Config{URL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if c := capsOf(b); !c.Send || !c.Cancel || !c.Create || c.Backend != "suna" {
		t.Fatalf("offers %+v", c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts, err := b.Sessions(ctx)
	if err != nil || len(ts) != 1 || ts[0].ID != thread {
		t.Fatalf("tasks %+v %v", ts, err)
	}
	tl := events.NewTimeline()
	var mu sync.Mutex
	sctx, scancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- follow(sctx, b, thread, func(evs []events.Event) {
			mu.Lock()
			defer mu.Unlock()
			for i := range evs {
				if isResetEvent(&evs[i]) {
					tl = events.NewTimeline()
					continue
				}
				tl.Apply(evs[i])
			}
		}, func(sse.ConnState) {})
	}()
	for {
		mu.Lock()
		finished := false
		for _, it := range tl.Items() {
			if it.Kind == events.ItemAssistant && len(it.Text) > 0 && tl.Status() == events.RunIdle &&
				strings.Contains(it.Text, "café ☕ ready") {
				finished = true
			}
		}
		mu.Unlock()
		if finished {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the run's answer never arrived")
		}
		time.Sleep(10 * time.Millisecond)
	}
	scancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	users := 0
	for _, it := range tl.Items() {
		if it.Kind == events.ItemUser {
			users++
		}
	}
	if users != 1 {
		t.Fatalf("%d user items, want 1 (no duplicates across the run's end and the history reload)", users)
	}
}
