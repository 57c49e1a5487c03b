package codex

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/perch-tui/perch/events"
)

// fakeDaemon serves Codex's app-server protocol on home's control socket
// as the daemon does: initialize, then thread/read with the status set.
type fakeDaemon struct {
	mu     sync.Mutex
	status any // the thread's status; nil: the daemon does not know it
}

func (f *fakeDaemon) set(status any) {
	f.mu.Lock()
	f.status = status
	f.mu.Unlock()
}

func startDaemon(t *testing.T, home string) *fakeDaemon {
	t.Helper()
	dir := filepath.Join(home, "app-server-control")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "app-server-control.sock"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeDaemon{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		// A notification first, as the real daemon sends.
		c.Write(ctx, websocket.MessageText, []byte(`{"method":"remoteControl/status/changed","params":{"status":"disabled"}}`))
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			var req struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(b, &req) != nil || req.ID == nil {
				continue
			}
			var resp map[string]any
			switch req.Method {
			case "initialize":
				resp = map[string]any{"id": *req.ID, "result": map[string]any{"userAgent": "fake"}}
			case "thread/read":
				f.mu.Lock()
				st := f.status
				f.mu.Unlock()
				if st == nil {
					resp = map[string]any{"id": *req.ID, "error": map[string]any{"code": -32600, "message": "thread not loaded"}}
				} else {
					resp = map[string]any{"id": *req.ID, "result": map[string]any{"thread": map[string]any{"status": st}}}
				}
			default:
				continue
			}
			out, _ := json.Marshal(resp)
			if c.Write(ctx, websocket.MessageText, out) != nil {
				return
			}
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return f
}

// TestDaemonState: where Codex's daemon runs the thread, its status tells
// a turn at work from one waiting for the user, which the files cannot;
// without an answer the list keeps the honest union.
func TestDaemonState(t *testing.T) {
	lines := tuiLines(t)
	home := codexHome(t)
	writeLines(t, rolloutPath(home, tuiThread), lines[:lineIndex(t, lines, `I'll write the file`)+2])
	holdLock(t, home, tuiThread)
	d := startDaemon(t, home)
	l := open(t, home)
	for _, c := range []struct {
		status any
		want   string // the task's status
		detail string
	}{
		{map[string]any{"type": "active", "activeFlags": []string{"waitingOnApproval"}}, events.StatusWaiting, DetailApproval},
		{map[string]any{"type": "active", "activeFlags": []string{"waitingOnUserInput"}}, events.StatusWaiting, DetailInput},
		{map[string]any{"type": "active", "activeFlags": []string{}}, events.StatusGenerating, DetailWorking},
		{nil, events.StatusGenerating, DetailBusy},                            // a thread the daemon does not run (the TUI runs it)
		{map[string]any{"type": "idle"}, events.StatusGenerating, DetailBusy}, // the files say a turn runs: not overruled
	} {
		d.set(c.status)
		if got := only(t, l); got.Status != c.want || got.Detail != c.detail {
			t.Errorf("daemon says %v: %q (%q), want %q (%q)", c.status, got.Status, got.Detail, c.want, c.detail)
		}
	}

	// The watch asks again each second while the turn runs: the approval
	// prompt shows without any file event.
	d.set(map[string]any{"type": "active", "activeFlags": []string{}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 10)
	go l.WatchSessions(ctx, func(ts []events.Task) {
		if len(ts) == 1 {
			got <- ts[0].Detail
		}
	})
	if first := <-got; first != DetailWorking {
		t.Fatalf("first list: %q", first)
	}
	d.set(map[string]any{"type": "active", "activeFlags": []string{"waitingOnApproval"}})
	if next := <-got; next != DetailApproval {
		t.Errorf("after the approval prompt opened: %q", next)
	}
}
