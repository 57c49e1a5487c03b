package tui

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

// TestCapsOf: what the UI offers is what the backend can do; the status
// bars name the system except maria (perch's own daemon) and a file; the
// composer's place says why nothing can be sent.
func TestCapsOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps client.Capabilities
		want uiCaps
	}{
		{"suna", client.Capabilities{Create: true, Send: true, Cancel: true},
			uiCaps{Send: true, Cancel: true, Create: true, Backend: "suna"}},
		{"pynchy", client.Capabilities{Send: true, PipesFollowUps: true},
			uiCaps{Send: true, Backend: "pynchy"}},
		{"maria", client.Capabilities{Create: true, Send: true, Cancel: true, ServerQueue: true, Cost: true, WebSearch: true, Home: true},
			uiCaps{Send: true, Cancel: true, Create: true, WebSearch: true}}, // perch's own daemon: no label
		// The name decides nothing: a system that is not the home one is
		// named, whatever it is called.
		{"maria", client.Capabilities{Send: true},
			uiCaps{Send: true, Backend: "maria"}},
		{"viewer", client.Capabilities{},
			uiCaps{Backend: "viewer", Note: "viewer at http://127.0.0.1:8090/v1 takes no follow-ups from perch — read-only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := capsOf(&fakeBackend{name: tc.name, caps: &tc.caps}); got != tc.want {
				t.Fatalf("offers %+v, want %+v", got, tc.want)
			}
		})
	}
	t.Run("file", func(t *testing.T) {
		got := capsOf(recording{&fakeBackend{name: "claude-code", caps: &client.Capabilities{Recording: true}}})
		if want := (uiCaps{Note: "replay of session.jsonl (claude-code) — read-only", Replay: true}); got != want {
			t.Fatalf("offers %+v, want %+v", got, want)
		}
	})
}

// recording is a backend whose URL is a file's path.
type recording struct{ *fakeBackend }

func (recording) URL() string { return "testdata/session.jsonl" }

// TestFollow: a session's updates reach the UI as steps in order; a Reset
// becomes the reset event ahead of the update's events; an update without
// events makes no step; states pass through, and Synced without a state
// says live.
func TestFollow(t *testing.T) {
	reconnecting := connState{Phase: sse.PhaseReconnecting, Attempt: 1}
	ev := func(id string) events.Event { return events.Event{Kind: events.KindUserMessage, ID: id, Text: id} }
	updates := []client.Update{
		{Events: []events.Event{ev("a"), ev("b")}, Synced: true},
		{State: &reconnecting},
		{},
		{Reset: true, Events: []events.Event{ev("a"), ev("b"), ev("c")}, Synced: true},
		{Events: []events.Event{ev("d")}},
	}
	b := &fakeBackend{follow: func(ctx context.Context, _ string, on func(client.Update)) error {
		for _, u := range updates {
			on(u)
		}
		<-ctx.Done()
		return ctx.Err()
	}}
	var (
		mu  sync.Mutex
		got []string
	)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- follow(ctx, b, "t1", func(evs []events.Event) {
			mu.Lock()
			defer mu.Unlock()
			step := "step:"
			for i := range evs {
				if isResetEvent(&evs[i]) {
					step += " RESET"
					continue
				}
				step += " " + evs[i].ID
			}
			got = append(got, step)
		}, func(s connState) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, "state "+s.Phase.String())
		})
	}()
	want := []string{
		"step: a b",
		"state " + sse.PhaseLive.String(),
		"state " + sse.PhaseReconnecting.String(),
		"step: RESET a b c",
		"state " + sse.PhaseLive.String(),
		"step: d",
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(want) {
			break
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("follow returned %v, want context.Canceled", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
