package bridge

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/backend/suna"
	"github.com/perch-tui/perch/events"
	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/tui"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scripted is a backend.Backend that plays updates and records calls.
type scripted struct {
	name    string
	caps    backend.Capabilities
	updates []backend.Update

	mu       sync.Mutex
	sessions [][]events.Task // one answer per Sessions call, the last repeated
	calls    int
	sessErr  error
	sent     []backend.Message
	sendRes  backend.SendResult
	creates  []backend.CreateRequest
}

func (s *scripted) Name() string                       { return s.name }
func (s *scripted) URL() string                        { return "http://127.0.0.1:1/v1" }
func (s *scripted) Capabilities() backend.Capabilities { return s.caps }
func (s *scripted) Sessions(context.Context) ([]events.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.sessErr != nil && s.calls == 2 {
		return nil, s.sessErr
	}
	if len(s.sessions) == 0 {
		return nil, nil
	}
	i := min(s.calls-1, len(s.sessions)-1)
	return s.sessions[i], nil
}
func (s *scripted) Session(_ context.Context, id string) (events.Task, error) {
	return events.Task{ID: id}, nil
}
func (s *scripted) Follow(ctx context.Context, _ string, on func(backend.Update)) error {
	for _, u := range s.updates {
		on(u)
	}
	<-ctx.Done()
	return ctx.Err()
}
func (s *scripted) Send(_ context.Context, _ string, m backend.Message) (backend.SendResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, m)
	return s.sendRes, nil
}
func (s *scripted) Cancel(context.Context, string) ([]events.QueuedMessage, error) {
	if !s.caps.Cancel {
		return nil, backend.ErrUnsupported
	}
	return nil, nil
}
func (s *scripted) Create(_ context.Context, r backend.CreateRequest) (events.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.creates = append(s.creates, r)
	return events.Task{ID: "new-1", Name: r.Name}, nil
}

// TestCapabilities: what the UI offers is what the backend can do.
func TestCapabilities(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps backend.Capabilities
		want tui.Capabilities
	}{
		{"suna", backend.Capabilities{Create: true, Send: true, Cancel: true},
			tui.Capabilities{Send: true, Cancel: true, Create: true, Backend: "suna"}},
		{"pynchy", backend.Capabilities{Send: true, PipesFollowUps: true},
			tui.Capabilities{Send: true, Backend: "pynchy"}},
		{"maria", backend.Capabilities{Create: true, Send: true, Cancel: true, ServerQueue: true, Cost: true, WebSearch: true},
			tui.Capabilities{Send: true, Cancel: true, Create: true, WebSearch: true}}, // perch's own daemon: no label
		{"viewer", backend.Capabilities{},
			tui.Capabilities{Backend: "viewer", Note: "viewer at http://127.0.0.1:1/v1 takes no follow-ups from perch — read-only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := New(&scripted{name: tc.name, caps: tc.caps}).Capabilities()
			if got != tc.want {
				t.Fatalf("capabilities %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestStreamTaskEvents: updates become events in order, a Reset becomes
// the UI's reset event at its place, states pass through, and Synced
// without a state says live.
func TestStreamTaskEvents(t *testing.T) {
	reconnecting := sse.ConnState{Phase: sse.PhaseReconnecting, Attempt: 1}
	ev := func(id string) events.Event { return events.Event{Kind: events.KindUserMessage, ID: id, Text: id} }
	b := &scripted{name: "suna", updates: []backend.Update{
		{Events: []events.Event{ev("a"), ev("b")}, Synced: true},
		{State: &reconnecting},
		{Reset: true, Events: []events.Event{ev("a"), ev("b"), ev("c")}, Synced: true},
		{Events: []events.Event{ev("d")}},
	}}
	var (
		mu     sync.Mutex
		got    []string
		states []sse.Phase
	)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- New(b).StreamTaskEvents(ctx, "t1", func(e events.Event) {
			mu.Lock()
			defer mu.Unlock()
			if tui.IsResetEvent(&e) {
				got = append(got, "RESET")
				return
			}
			got = append(got, e.ID)
		}, func(s sse.ConnState) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, "state:"+s.Phase.String())
			states = append(states, s.Phase)
		})
	}()
	want := []string{"a", "b", "state:" + sse.PhaseLive.String(), "state:" + sse.PhaseReconnecting.String(),
		"RESET", "a", "b", "c", "state:" + sse.PhaseLive.String(), "d"}
	waitLen(&mu, &got, len(want))
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("StreamTaskEvents returned %v, want context.Canceled", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestStreamTaskSteps: each update's events go to the UI as one step
// with the update's Backlog (a Reset first as tui.ResetEvent), and an
// update without events makes no step.
func TestStreamTaskSteps(t *testing.T) {
	ev := func(id string) events.Event { return events.Event{Kind: events.KindUserMessage, ID: id, Text: id} }
	b := &scripted{name: "maria", updates: []backend.Update{
		{Events: []events.Event{ev("a")}, Backlog: backend.BacklogMore},
		{Events: []events.Event{ev("b")}, Backlog: backend.BacklogNone},
		{Synced: true},
		{Reset: true, Events: []events.Event{ev("a")}},
	}}
	var (
		mu  sync.Mutex
		got []string
	)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- New(b).StreamTaskSteps(ctx, "t1", func(evs []events.Event, bl backend.Backlog) {
			mu.Lock()
			defer mu.Unlock()
			step := fmt.Sprintf("backlog %d:", bl)
			for i := range evs {
				if tui.IsResetEvent(&evs[i]) {
					step += " RESET"
					continue
				}
				step += " " + evs[i].ID
			}
			got = append(got, step)
		}, func(sse.ConnState) {})
	}()
	want := []string{
		fmt.Sprintf("backlog %d: a", backend.BacklogMore),
		fmt.Sprintf("backlog %d: b", backend.BacklogNone),
		fmt.Sprintf("backlog %d: RESET a", backend.BacklogUnknown),
	}
	waitLen(&mu, &got, len(want))
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("StreamTaskSteps returned %v, want context.Canceled", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestSendCreateCancel: the UI's calls reach the backend with what the
// user typed; cancel on a backend that cannot says so.
func TestSendCreateCancel(t *testing.T) {
	b := &scripted{name: "pynchy", caps: backend.Capabilities{Send: true, PipesFollowUps: true},
		sendRes: backend.SendResult{ID: "m1", Queued: true}}
	br := New(b)
	ctx := context.Background()
	res, err := br.Send(ctx, "c1", "also this", true)
	if err != nil || res.ID != "m1" || !res.Queued {
		t.Fatalf("send: %+v %v", res, err)
	}
	if len(b.sent) != 1 || b.sent[0] != (backend.Message{Text: "also this", WebSearch: true}) {
		t.Fatalf("sent %+v", b.sent)
	}
	if _, err := br.Cancel(ctx, "c1"); !errors.Is(err, backend.ErrUnsupported) {
		t.Fatalf("cancel on pynchy: %v, want ErrUnsupported", err)
	}
	cr, err := br.CreateTask(ctx, maria.CreateTaskRequest{Name: "n", Model: "m", Cwd: "/w", Message: "hi"})
	if err != nil || cr.Task.ID != "new-1" {
		t.Fatalf("create: %+v %v", cr, err)
	}
	if want := (backend.CreateRequest{Name: "n", Model: "m", Cwd: "/w", Prompt: "hi"}); b.creates[0] != want {
		t.Fatalf("create request %+v, want %+v", b.creates[0], want)
	}
}

// TestSessionListPolled: a backend that cannot watch its sessions is
// polled; each change reaches the UI as the whole list, an unchanged list
// does not, and a failure shows as reconnecting.
func TestSessionListPolled(t *testing.T) {
	at := time.UnixMilli(1774598400000)
	one := []events.Task{{ID: "t1", Name: "first", Status: events.StatusIdle, Created: at, Updated: at}}
	two := append([]events.Task{{ID: "t2", Name: "", Status: events.StatusGenerating, Cwd: "/w", Model: "m"}}, one...)
	b := &scripted{name: "suna", sessions: [][]events.Task{one, nil, one, two}, sessErr: errors.New("connection refused")}
	br := New(b)
	br.pollEvery = 5 * time.Millisecond
	var (
		mu     sync.Mutex
		lists  [][]events.Task
		phases []sse.Phase
	)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- br.WatchTasks(ctx, func(ts []events.Task) {
			mu.Lock()
			defer mu.Unlock()
			lists = append(lists, ts)
		}, func(s sse.ConnState) {
			mu.Lock()
			defer mu.Unlock()
			phases = append(phases, s.Phase)
		})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(lists)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // more polls: the unchanged list must not come again
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("WatchTasks returned %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lists) != 2 || !reflect.DeepEqual(lists[0], one) || !reflect.DeepEqual(lists[1], two) {
		t.Fatalf("lists %+v, want %+v then %+v", lists, one, two)
	}
	wantPhases := []sse.Phase{sse.PhaseConnecting, sse.PhaseLive, sse.PhaseReconnecting, sse.PhaseLive}
	if !reflect.DeepEqual(phases, wantPhases) {
		t.Fatalf("phases %v, want %v", phases, wantPhases)
	}
}

// TestAgainstFakeSuna: over loopback HTTP, the bridge of the live Suna
// backend lists the fake's thread and streams its history and run, and
// says Suna can cancel and create.
func TestAgainstFakeSuna(t *testing.T) {
	s := fakesuna.New(fakesuna.Options{FrameDelay: -1})
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	thread, _, err := s.Start("", "What is in my workspace?")
	if err != nil {
		t.Fatal(err)
	}
	b, err := suna.Open(backend.Config{URL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	br := New(b)
	if c := br.Capabilities(); !c.Send || !c.Cancel || !c.Create || c.Backend != "suna" {
		t.Fatalf("capabilities %+v", c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts, err := br.Tasks(ctx)
	if err != nil || len(ts) != 1 || ts[0].ID != thread {
		t.Fatalf("tasks %+v %v", ts, err)
	}
	tl := events.NewTimeline()
	var mu sync.Mutex
	sctx, scancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- br.StreamTaskEvents(sctx, thread, func(e events.Event) {
			mu.Lock()
			defer mu.Unlock()
			if tui.IsResetEvent(&e) {
				tl = events.NewTimeline()
				return
			}
			tl.Apply(e)
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
			t.Fatal("the run's answer never arrived through the bridge")
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

// waitLen waits, up to 10 s, until *got (guarded by mu) holds n entries;
// the caller then compares what it holds.
func waitLen(mu *sync.Mutex, got *[]string, n int) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		have := len(*got)
		mu.Unlock()
		if have >= n || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
