package suna_test

import (
	"context"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/suna"
	"github.com/perch-tui/perch/events"
	fake "github.com/perch-tui/perch/fakedaemon/suna"
)

// settled follows through FollowSettled, so that the watcher of the live
// tests reads it as it reads Follow.
type settled struct{ *suna.Live }

func (s settled) Follow(ctx context.Context, id string, on func(client.Update)) error {
	return s.FollowSettled(ctx, id, on)
}

// FollowSettled joining a running run sends nothing (neither the history
// before it nor any of its stream), then the run whole once it ended, the
// history read once: the same final timeline as Follow (its goldens, and
// the import of the history), for a run joined mid-way, a
// stream cut every few frames, a server restarted mid-run, a stream that
// never reports the end, a stopped and a failed run. With the quiet-stream
// poll set to a minute, a run whose stream reports its end must be found
// over by that frame (mayEnd), not by the poll.
func TestFollowSettled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		opts   fake.Options
		prompt string
		poll   time.Duration
		during func(f *fakeAPI, l *suna.Live, tid string)
		golden string
	}{
		{name: "joined mid-run", golden: "midrun", poll: time.Minute},
		{name: "cut every 3 frames", opts: fake.Options{DropEvery: 3}, golden: "midrun", poll: time.Minute},
		{name: "server restart", opts: fake.Options{FrameDelay: 3 * time.Millisecond}, golden: "midrun", poll: time.Minute,
			during: func(f *fakeAPI, _ *suna.Live, _ string) { f.restart() }},
		// The end is not on the stream: the quiet-stream poll finds it.
		{name: "cached running", opts: fake.Options{CachedRunning: true, DropEvery: 5}, golden: "midrun", poll: 100 * time.Millisecond},
		{name: "stopped", prompt: "Tell me a long story, slow please", golden: "stopped", poll: 100 * time.Millisecond,
			during: func(_ *fakeAPI, l *suna.Live, tid string) {
				if _, err := l.Cancel(context.Background(), tid); err != nil {
					t.Error(err)
				}
			}},
		{name: "failed", prompt: "please fail now", golden: "failed", poll: time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := tc.opts
			opts.Hold = true
			f := newFake(t, opts)
			prompt := tc.prompt
			if prompt == "" {
				prompt = "What is in my workspace?"
			}
			tid, rid := startRun(t, f, "", prompt)
			// Some frames in (a short script is held before its last).
			for n := -1; f.srv.Frames(rid) < 10 && f.srv.Frames(rid) != n; {
				n = f.srv.Frames(rid)
				time.Sleep(50 * time.Millisecond)
			}
			l, err := suna.OpenTuned(client.Config{URL: f.base, Client: httpClient(t)}, tc.poll, 10*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			w := follow(t, settled{l}, tid)
			if f.srv.RunStatus(rid) != "running" {
				t.Fatalf("the held run is %s", f.srv.RunStatus(rid))
			}
			// The run's stream is opened and read, but nothing is sent:
			// not the history before it (the read at the run's end
			// replaces it), none of the stream.
			deadline := time.Now().Add(30 * time.Second)
			for f.srv.Requests("GET /agent-run/{id}/stream") == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the run's stream was never opened")
				}
				time.Sleep(5 * time.Millisecond)
			}
			if n := f.srv.Requests("GET /threads/{id}/messages"); n != 0 {
				t.Errorf("the history was read %d times before the run's end", n)
			}
			w.mu.Lock()
			if w.synced != 0 || w.updates > len(w.states) {
				t.Errorf("%d updates (%d synced, %d states) before the run's end; want states only", w.updates, w.synced, len(w.states))
			}
			w.mu.Unlock()
			if tc.during != nil {
				tc.during(f, l, tid)
			}
			f.srv.Release()
			w.waitFor(t, "the run's end", func(w *watcher) bool { return w.synced >= 1 && w.tl.Status() == events.RunIdle })
			w.mu.Lock()
			// One update for the run whole (connection states aside).
			if w.resets != 0 || w.synced != 1 || w.updates > 1+len(w.states) {
				t.Errorf("resets %d, synced %d, %d updates (%d states); want the history read at the run's end alone",
					w.resets, w.synced, w.updates, len(w.states))
			}
			if n := f.srv.Requests("GET /threads/{id}/messages"); n != 1 {
				t.Errorf("the history was read %d times; want once, at the run's end", n)
			}
			w.mu.Unlock()
			finalCheck(t, f, w, "", tid, tc.golden)
		})
	}
}

func TestMayEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		frame string
		want  bool
	}{
		{`{"type":"status","status":"completed","message":"done"}`, true},
		{`{"type":"status","status":"agent_not_running"}`, true},
		{`{"type":"status","status":"stopped"}`, true},
		{`{"type":"status","status":"failed","message":"boom"}`, true},
		{`{"type":"status","status":"error"}`, true},
		{`{"type":"error","error":"rate limit exceeded"}`, true},
		{`{"type":"status","content":"{\"status_type\":\"error\",\"message\":\"x\"}","metadata":"{}"}`, true},
		{`{"type":"status","status":"initializing","message":"starting"}`, false},
		{`{"type":"status","content":"{\"status_type\":\"tool_started\"}","metadata":"{}"}`, false},
		{`{"type":"assistant","content":"{\"role\":\"assistant\",\"content\":\"the status is error\"}","metadata":"{\"stream_status\":\"chunk\"}"}`, false},
		{`{"type":"assistant","content":"{\"content\":\"\\\"status\\\": \\\"completed\\\"\"}"}`, false},
		{`{"type":"ping"}`, false},
		{`{"message_id": null, "type" : "status", "content": "{\"status_type\": \"error\"}"}`, true},
		{`{"content": "{\"type\": \"error\"}", "type": "assistant"}`, false},
		{`{"type": 3, "status": "completed"}`, false},
		{`not json "status" at all`, false},
		{``, false},
	} {
		if got := suna.MayEnd([]byte(tc.frame)); got != tc.want {
			t.Errorf("mayEnd(%s) = %v, want %v", tc.frame, got, tc.want)
		}
	}
}

// mayEnd picks every status frame after which the decoder says the run is
// over (or failed), and no other: the two read the same statuses.
func TestMayEndAgreesWithTheDecoder(t *testing.T) {
	t.Parallel()
	for _, st := range []string{"completed", "agent_not_running", "stopped", "failed", "error",
		"initializing", "llm_streaming", "running", "queued", ""} {
		frame := []byte(`{"type": "status", "status": "` + st + `", "message": "m"}`)
		d := suna.NewDecoder()
		d.Deltas = true
		ends := false
		for _, ev := range d.Decode(frame) {
			if (ev.Kind == events.KindRunState && ev.RunStatus != events.StatusGenerating) ||
				(ev.Kind == events.KindNotice && ev.Level == events.LevelError) {
				ends = true
			}
		}
		if got := suna.MayEnd(frame); got != ends {
			t.Errorf("status %q: mayEnd %v, the decoder ends the run: %v", st, got, ends)
		}
	}
}
