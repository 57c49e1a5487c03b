package client_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// polled is a backend that cannot watch its sessions: each Sessions call
// gives the next answer (the last repeated); the second call fails with
// err when set.
type polled struct {
	client.Backend // only Sessions and URL are called
	mu             sync.Mutex
	answers        [][]events.Task
	calls          int
	err            error
}

func (p *polled) URL() string { return "http://127.0.0.1:1/v1" }

func (p *polled) Sessions(context.Context) ([]events.Task, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.err != nil && p.calls == 2 {
		return nil, p.err
	}
	if len(p.answers) == 0 {
		return nil, nil
	}
	return p.answers[min(p.calls-1, len(p.answers)-1)], nil
}

// watching is a backend with its own watch of the list (no state).
type watching struct {
	client.Backend
	lists [][]events.Task
}

func (w *watching) WatchSessions(ctx context.Context, on func([]events.Task)) error {
	for _, l := range w.lists {
		on(l)
	}
	<-ctx.Done()
	return ctx.Err()
}

// record collects what WatchSessions hands on.
type record struct {
	mu     sync.Mutex
	lists  [][]events.Task
	phases []sse.Phase
}

func (r *record) on(ts []events.Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lists = append(r.lists, ts)
}

func (r *record) onState(s client.ConnState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.phases = append(r.phases, s.Phase)
}

// watch runs WatchSessions until n lists came in (and a while more, for
// anything that should not come), then ends it.
func (r *record) watch(t *testing.T, b client.Backend, every time.Duration, n int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- client.WatchSessions(ctx, b, every, r.on, r.onState) }()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		have := len(r.lists)
		r.mu.Unlock()
		if have >= n {
			break
		}
	}
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("WatchSessions returned %v, want context.Canceled", err)
	}
}

// TestWatchSessionsPolls: a backend that cannot watch its sessions is
// polled; each change reaches the view as the whole list, an unchanged
// list does not, and a failure shows as reconnecting.
func TestWatchSessionsPolls(t *testing.T) {
	at := time.UnixMilli(1774598400000)
	one := []events.Task{{ID: "t1", Name: "first", Status: events.StatusIdle, Created: at, Updated: at}}
	two := append([]events.Task{{ID: "t2", Status: events.StatusGenerating, Cwd: "/w", Model: "m"}}, one...)
	b := &polled{answers: [][]events.Task{one, nil, one, two}, err: errors.New("connection refused")}
	var r record
	r.watch(t, b, 5*time.Millisecond, 2)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lists) != 2 || !reflect.DeepEqual(r.lists[0], one) || !reflect.DeepEqual(r.lists[1], two) {
		t.Fatalf("lists %+v, want %+v then %+v", r.lists, one, two)
	}
	want := []sse.Phase{sse.PhaseConnecting, sse.PhaseLive, sse.PhaseReconnecting, sse.PhaseLive}
	if !reflect.DeepEqual(r.phases, want) {
		t.Fatalf("phases %v, want %v", r.phases, want)
	}
}

// TestWatchSessionsUsesTheBackendsWatch: a backend that watches its list
// is not polled; its first list says the watch is live.
func TestWatchSessionsUsesTheBackendsWatch(t *testing.T) {
	one := []events.Task{{ID: "t1"}}
	b := &watching{lists: [][]events.Task{one, {}}}
	var r record
	r.watch(t, b, time.Millisecond, 2) // Sessions would panic: not implemented
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lists) != 2 || !reflect.DeepEqual(r.lists[0], one) {
		t.Fatalf("lists %+v", r.lists)
	}
	if want := []sse.Phase{sse.PhaseConnecting, sse.PhaseLive}; !reflect.DeepEqual(r.phases, want) {
		t.Fatalf("phases %v, want %v", r.phases, want)
	}
}
