package bridge

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/internal/testproxy"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/tui"
)

// fakeMaria starts maria's fake daemon on loopback behind a raw TCP proxy
// (which the test may stop and start again: the daemon going away and
// coming back) and returns the bridge of maria's backend at the proxy.
func fakeMaria(t *testing.T, speed float64) (*fakedaemon.Daemon, *testproxy.TCP, *Bridge) {
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
	b, err := maria.Open(backend.Config{URL: "http://" + proxy.Addr + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	return d, proxy, New(b)
}

// watched records what a stream of the bridge handed to the UI.
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

func (w *watched) onEvent(ev events.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if tui.IsResetEvent(&ev) {
		w.tl = events.NewTimeline()
		return
	}
	w.tl.Apply(ev)
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

// TestMariaThroughTheBridge: maria shown through the bridge keeps what the
// UI had on its own path. Over real loopback against the fake daemon: the
// capabilities (web search, no backend label), the task list live from
// the daemon stream (a created task appears and its status follows its
// run, without polling), the task's decoded events with the server
// queue's snapshots (a follow-up sent with web search while the agent
// runs shows queued, with its web flag), and cancel returning the queue.
func TestMariaThroughTheBridge(t *testing.T) {
	d, _, br := fakeMaria(t, 2)
	if c := br.Capabilities(); c != (tui.Capabilities{Send: true, Cancel: true, Create: true, WebSearch: true}) {
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
		if err := br.WatchTasks(ctx, list.onTasks, list.onState); !errors.Is(err, context.Canceled) {
			t.Errorf("WatchTasks returned %v, want context.Canceled", err)
		}
	}()
	list.until(t, "the first (empty) list, live", func(w *watched) bool {
		return len(w.lists) > 0 && w.lastPhase() == sse.PhaseLive
	})

	res, err := br.CreateTask(ctx, maria.CreateTaskRequest{Cwd: t.TempDir(), Name: "slow", Message: "Run the slow benchmark please."})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Task.ID
	list.until(t, "the created task, generating, in the watched list", func(w *watched) bool {
		tk, ok := find(w.lastList(), id)
		return ok && tk.Status == events.StatusGenerating && tk.Name == "slow"
	})

	task := &watched{tl: events.NewTimeline()}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := br.StreamTaskEvents(ctx, id, task.onEvent, task.onState); !errors.Is(err, context.Canceled) {
			t.Errorf("StreamTaskEvents returned %v, want context.Canceled", err)
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
	sent, err := br.Send(ctx, id, "and then search the web", true)
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
	if _, err := br.Cancel(ctx, id); !errors.Is(err, backend.ErrNotRunning) {
		t.Fatalf("cancel when idle: %v, want backend.ErrNotRunning", err)
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
		_ = br.WatchTasks(ctx, list.onTasks, list.onState)
	}()
	go func() {
		defer wg.Done()
		_ = br.StreamTaskEvents(ctx, id, task.onEvent, task.onState)
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
