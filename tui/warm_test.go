package tui

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/perch-tui/perch/events"
)

// gatedBackend answers Sessions only once released, and counts the calls.
type gatedBackend struct {
	fakeBackend
	release chan struct{}
	calls   chan struct{}
}

func (g *gatedBackend) Sessions(ctx context.Context) ([]events.Task, error) {
	g.calls <- struct{}{}
	select {
	case <-g.release:
		return g.fakeBackend.Sessions(ctx)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestTasksPrefetch(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	g := &gatedBackend{fakeBackend: fakeBackend{tasks: []events.Task{{ID: "a"}, {ID: "b"}}},
		release: make(chan struct{}), calls: make(chan struct{}, 4)}
	p := prefetchTasks(ctx, g)
	select {
	case <-g.calls: // the request is under way before anyone takes it
	case <-time.After(10 * time.Second):
		t.Fatal("prefetch did not call Tasks")
	}
	got := make(chan []events.Task)
	go func() {
		ts, err, ok := p.take(ctx)
		if err != nil || !ok {
			t.Errorf("take: %v %v", err, ok)
		}
		got <- ts
	}()
	close(g.release)
	if ts := <-got; len(ts) != 2 || ts[0].ID != "a" {
		t.Errorf("take returned %v", ts)
	}
	if _, _, ok := p.take(ctx); ok {
		t.Error("a second take must ask the backend itself")
	}
	p.wait()
	if len(g.calls) != 0 {
		t.Errorf("Tasks called %d more times", len(g.calls))
	}
	var nilp *tasksPrefetch
	if _, _, ok := nilp.take(ctx); ok {
		t.Error("a nil prefetch has nothing to give")
	}
	nilp.wait()
}

func TestTasksPrefetchEndsWithContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	g := &gatedBackend{release: make(chan struct{}), calls: make(chan struct{}, 4)}
	p := prefetchTasks(ctx, g)
	takeCtx, takeCancel := context.WithCancel(context.Background())
	takeCancel()
	if _, err, ok := p.take(takeCtx); !ok || !errors.Is(err, context.Canceled) {
		t.Errorf("take with an ended context: %v %v", err, ok)
	}
	cancel()
	p.wait() // the backend call ends with the UI's context
}
