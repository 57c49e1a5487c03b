package claudecode

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
)

// fakeCLI is a running Claude Code as its messaging socket and files show
// it: a registry file, a key file, and a socket that takes a message (an
// auth line with the right token first) and writes its receipt (a
// queue-operation enqueue line) into the transcript, as the real CLI does
// (testdata/real/live.record.jsonl).
type fakeCLI struct {
	t          *testing.T
	dir, id    string
	transcript string
	sock       string
	ln         net.Listener
	killed     atomic.Bool
	// lose: read a message and drop it (the process dies before taking
	// it); slow: take it but write the receipt only after this long.
	lose atomic.Bool
	slow atomic.Int64

	mu  sync.Mutex
	got []string // the messages taken
	bad []string // what the socket refused to take
}

const fakePID = 4242

func newFakeCLI(t *testing.T, status, waitingFor string) *fakeCLI {
	t.Helper()
	dir := t.TempDir()
	// A socket path must be short (108 bytes): not under t.TempDir.
	sdir, err := os.MkdirTemp("", "ccs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sdir) })
	f := &fakeCLI{t: t, dir: dir, id: "5d1c0f8e-2b7a-4c55-9e0d-3f6a1b2c4d5e", sock: filepath.Join(sdir, "s.sock")}
	f.transcript = filepath.Join(dir, "projects", "-work", f.id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(f.transcript), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	appendFile(t, f.transcript, `{"type":"user","sessionId":"`+f.id+`","cwd":"/work","message":{"role":"user","content":"start"}}`+"\n")
	f.setStatus(status, waitingFor)
	if err := os.WriteFile(filepath.Join(dir, "sessions", "4242.abcdef.key"), []byte(`{"peerToken":"sekrit-token","procStart":"77"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if f.ln, err = net.Listen("unix", f.sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.ln.Close() })
	go f.serve()
	return f
}

func (f *fakeCLI) setStatus(status, waitingFor string) {
	b, _ := json.Marshal(map[string]any{"pid": fakePID, "sessionId": f.id, "cwd": "/work", "procStart": "77",
		"version": "2.1.332", "kind": "interactive", "status": status, "waitingFor": waitingFor,
		"messagingSocketPath": f.sock, "statusUpdatedAt": time.Now().UnixMilli()})
	if err := os.WriteFile(filepath.Join(f.dir, "sessions", "4242.json"), b, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// kill is kill -9: the socket stops answering, the registry file stays.
func (f *fakeCLI) kill() {
	f.killed.Store(true)
	f.ln.Close()
}

func (f *fakeCLI) local() *Local {
	return newLocal(f.dir, func(pid int, start string) bool { return pid == fakePID && start == "77" && !f.killed.Load() })
}

func (f *fakeCLI) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		go f.conn(c)
	}
}

func (f *fakeCLI) conn(c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	authed := false
	for sc.Scan() {
		var m struct {
			Type     string `json:"type"`
			Token    string `json:"token"`
			Priority string `json:"priority"`
			Session  string `json:"session_id"`
			Message  struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			f.refuse("not JSON: " + sc.Text())
			return
		}
		switch {
		case m.Type == "auth":
			authed = m.Token == "sekrit-token"
			continue
		case !authed:
			f.refuse("not authenticated")
			return
		case m.Type != "user" || m.Message.Role != "user" || m.Session != f.id:
			f.refuse("not a user message of this session: " + sc.Text())
			return
		case m.Priority != "":
			f.refuse("a priority: " + m.Priority)
			return
		}
		if f.lose.Load() {
			continue
		}
		f.mu.Lock()
		f.got = append(f.got, m.Message.Content)
		f.mu.Unlock()
		receipt, _ := json.Marshal(map[string]any{"type": "queue-operation", "operation": "enqueue",
			"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "sessionId": f.id, "content": m.Message.Content})
		write := func() { appendFile(f.t, f.transcript, string(receipt)+"\n") }
		if d := time.Duration(f.slow.Load()); d > 0 {
			time.AfterFunc(d, write)
		} else {
			write()
		}
	}
}

func (f *fakeCLI) refuse(why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bad = append(f.bad, why)
}

func (f *fakeCLI) taken() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.bad) > 0 {
		f.t.Errorf("the socket refused: %q", f.bad)
	}
	return append([]string(nil), f.got...)
}

// deliver adds text to the session's outbox as the user's send and
// delivers it as the outbox does.
func deliver(t *testing.T, d *outbox.Deliverer, task, text string) (outbox.Result, error) {
	t.Helper()
	if _, err := d.Store.Update(task, func(q *outbox.Queue) error {
		_, err := q.Add(text, outbox.IntentSend, false, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return d.Next(context.Background(), task, outbox.Busy)
}

// TestSendExactlyOnce sends follow-ups through the messaging socket to an
// idle, a busy, a waiting and a killed session, and to one that loses a
// message or takes it late: each text is taken by the CLI once.
func TestSendExactlyOnce(t *testing.T) {
	old := ReceiptWait
	ReceiptWait = 300 * time.Millisecond
	t.Cleanup(func() { ReceiptWait = old })

	for _, tc := range []struct {
		status, waitingFor string
		queued             bool
	}{
		{"idle", "", false},
		{"busy", "", true},
		// The user's own send into a waiting session goes (the CLI keeps
		// it for after the prompt); held ones do not (TestWaitingHoldsHeld).
		{"waiting", "permission prompt", true},
	} {
		t.Run(tc.status, func(t *testing.T) {
			f := newFakeCLI(t, tc.status, tc.waitingFor)
			d := &outbox.Deliverer{Store: outbox.NewMemStore(), Backend: f.local()}
			r, err := deliver(t, d, f.id, "do the next thing")
			if err != nil || !r.Delivered || r.Message.Queued != tc.queued {
				t.Fatalf("delivered %v queued %v err %v", r.Delivered, r.Message.Queued, err)
			}
			if got := f.taken(); len(got) != 1 || got[0] != "do the next thing" {
				t.Fatalf("the CLI took %q", got)
			}
		})
	}

	t.Run("killed", func(t *testing.T) {
		f := newFakeCLI(t, "idle", "")
		f.kill()
		d := &outbox.Deliverer{Store: outbox.NewMemStore(), Backend: f.local()}
		r, err := deliver(t, d, f.id, "are you there")
		if err == nil || r.Delivered || outbox.OutcomeOf(err) != outbox.OutcomeRetry {
			t.Fatalf("delivered %v, outcome %v, err %v", r.Delivered, outbox.OutcomeOf(err), err)
		}
		if r.Message.State != outbox.Held {
			t.Errorf("the message is %s, want held", r.Message.State)
		}
		if got := f.taken(); len(got) != 0 {
			t.Fatalf("a killed session took %q", got)
		}
	})

	t.Run("lost before the receipt", func(t *testing.T) {
		f := newFakeCLI(t, "idle", "")
		f.lose.Store(true)
		d := &outbox.Deliverer{Store: outbox.NewMemStore(), Backend: f.local()}
		r, err := deliver(t, d, f.id, "once only")
		if err == nil || r.Delivered || outbox.OutcomeOf(err) == outbox.OutcomeRetry || outbox.OutcomeOf(err) == outbox.OutcomePermanent {
			t.Fatalf("a write without a receipt: delivered %v, outcome %v, err %v", r.Delivered, outbox.OutcomeOf(err), err)
		}
		// The transcript has no receipt: the next try asks it first,
		// finds nothing, and sends again.
		f.lose.Store(false)
		r, err = d.Next(context.Background(), f.id, outbox.Busy)
		if err != nil || !r.Delivered {
			t.Fatalf("the retry: delivered %v err %v", r.Delivered, err)
		}
		if got := f.taken(); len(got) != 1 {
			t.Fatalf("the CLI took %q", got)
		}
	})

	t.Run("receipt late", func(t *testing.T) {
		f := newFakeCLI(t, "busy", "")
		f.slow.Store(int64(600 * time.Millisecond))
		d := &outbox.Deliverer{Store: outbox.NewMemStore(), Backend: f.local()}
		if _, err := deliver(t, d, f.id, "slowly"); err == nil {
			t.Fatal("no receipt within ReceiptWait, and no error")
		}
		waitFor(t, "the late receipt", 2*time.Second, func() bool {
			n, _ := countEnqueued(f.transcript, 0, "slowly", time.Time{})
			return n == 1
		})
		// The next try finds the receipt: sent, not sent again.
		r, err := d.Next(context.Background(), f.id, outbox.Busy)
		if err != nil {
			t.Fatal(err)
		}
		q, _ := d.Store.Load(f.id)
		if len(q.Pending()) != 0 || r.Message.ID != "" && !r.Message.Recovered {
			t.Fatalf("pending %v, result %+v", q.Pending(), r)
		}
		if got := f.taken(); len(got) != 1 {
			t.Fatalf("the CLI took %q", got)
		}
	})
}

// TestWaitingHoldsHeld: a held message is not delivered into a session
// waiting on a permission prompt, however long it waits; once the session
// is idle it goes, once.
func TestWaitingHoldsHeld(t *testing.T) {
	f := newFakeCLI(t, "waiting", "permission prompt")
	l := f.local()
	d := &outbox.Deliverer{Store: outbox.NewMemStore(), Backend: l}
	q, err := d.Store.Update(f.id, func(q *outbox.Queue) error {
		_, err := q.Add("after the prompt", outbox.IntentHold, false, time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	p := outbox.NewPace(l.Capabilities())
	p.Queue(q)
	now := time.Now()
	run := func(task events.Task) {
		tl := events.NewTimeline()
		tl.SetTask(task)
		p.Session(now, true, tl.Status())
		for i := 0; i < 5; i++ {
			now = now.Add(time.Second)
			act, _ := p.Step(now)
			switch act {
			case outbox.ActNext:
				r, err := d.Next(context.Background(), f.id, outbox.Idle)
				p.Done(now, act, []outbox.Result{r}, err)
			case outbox.ActFlush:
				rs, err := d.Flush(context.Background(), f.id)
				p.Done(now, act, rs, err)
			}
			q, _ := d.Store.Load(f.id)
			p.Queue(q)
		}
	}
	task, err := l.Session(context.Background(), f.id)
	if err != nil || task.Status != events.StatusWaiting || task.WaitingFor != "permission prompt" {
		t.Fatalf("the session: %+v %v", task, err)
	}
	run(task)
	if got := f.taken(); len(got) != 0 {
		t.Fatalf("sent into a permission prompt: %q", got)
	}
	f.setStatus("idle", "")
	task, _ = l.Session(context.Background(), f.id)
	run(task)
	if got := f.taken(); len(got) != 1 || got[0] != "after the prompt" {
		t.Fatalf("the CLI took %q", got)
	}
}

// TestSendWithoutSocket: an older CLI's session (no messaging socket)
// refuses follow-ups for good and says so before anything is typed.
func TestSendWithoutSocket(t *testing.T) {
	f := newFakeCLI(t, "idle", "")
	b, _ := json.Marshal(map[string]any{"pid": fakePID, "sessionId": f.id, "cwd": "/work", "procStart": "77", "version": "2.0.1", "status": "idle"})
	if err := os.WriteFile(filepath.Join(f.dir, "sessions", "4242.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	l := f.local()
	caps, why := l.SessionCapabilities(context.Background(), f.id)
	if caps.Send || !strings.Contains(why, "no messaging socket") {
		t.Errorf("caps %+v, %q", caps, why)
	}
	_, err := l.Send(context.Background(), f.id, client.Message{Text: "hi"})
	if outbox.OutcomeOf(err) != outbox.OutcomePermanent || !errors.Is(err, client.ErrUnsupported) {
		t.Errorf("err %v (outcome %v)", err, outbox.OutcomeOf(err))
	}
}
