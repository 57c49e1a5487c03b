package maria_test

// The outbox through maria: what the daemon received (a replay of the
// task, ended by Follow's Synced), how a failed send is classified, and
// exactly once across a perch killed between writing down and posting.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/outbox"
)

func fake(t *testing.T, dialect fakedaemon.Dialect, speed float64) (*fakedaemon.Daemon, string) {
	t.Helper()
	d := fakedaemon.New(fakedaemon.Options{Dialect: dialect, Speed: speed, Seed: 3})
	srv, err := d.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return d, srv.URL
}

func newClient(t *testing.T, base string) *maria.Client {
	t.Helper()
	cl, err := maria.NewClient(base)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func TestReceived(t *testing.T) {
	for _, dialect := range []fakedaemon.Dialect{"head", "docs", "legacy"} {
		t.Run(string(dialect), func(t *testing.T) {
			d, base := fake(t, dialect, 1.5)
			id, err := d.CreateTask(fakedaemon.CreateRequest{Message: "Run the slow benchmark please."})
			if err != nil {
				t.Fatal(err)
			}
			b := maria.New(newClient(t, base))
			ctx := context.Background()
			start := time.Now()
			// The docs dialect has no times: every message counts.
			old := 0
			if dialect == "docs" {
				old = 1
			}
			// Queued behind the running turn: counted from the queue.
			if _, err := b.Send(ctx, id, client.Message{Text: "then say hi ✓"}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				text  string
				since time.Time
				want  int
			}{
				{"then say hi ✓", start.Add(-time.Minute), 1},
				{"Run the slow benchmark please.", start.Add(-time.Minute), 1},
				{"Run the slow benchmark please.", start.Add(time.Hour), old}, // too old
				{"never sent", time.Time{}, 0},
			} {
				n, err := outbox.Received(ctx, b, id, c.text, c.since)
				if err != nil || n != c.want {
					t.Errorf("Received(%q) = %d, %v; want %d", c.text, n, err, c.want)
				}
			}
		})
	}
}

func TestClassify(t *testing.T) {
	_, base := fake(t, "head", 20)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	ctx := context.Background()
	_, err := maria.New(newClient(t, down)).Send(ctx, "3f2b9c1e-0000-4000-8000-000000000001", client.Message{Text: "x"})
	if outbox.OutcomeOf(err) != outbox.OutcomeRetry {
		t.Fatalf("daemon down: %v is %s", err, outbox.OutcomeOf(err))
	}
	_, err = maria.New(newClient(t, base)).Send(ctx, "3f2b9c1e-0000-4000-8000-000000000001", client.Message{Text: "x"})
	if outbox.OutcomeOf(err) != outbox.OutcomePermanent || !maria.IsNotFound(err) {
		t.Fatalf("no such task: %v is %s", err, outbox.OutcomeOf(err))
	}
	for status, want := range map[int]outbox.Outcome{503: outbox.OutcomeRetry, 429: outbox.OutcomeRetry, 500: outbox.OutcomeUnknown, 409: outbox.OutcomePermanent} {
		if got := outbox.OutcomeOf(maria.Classify(&maria.APIError{Status: status})); got != want {
			t.Errorf("%d: %s, want %s", status, got, want)
		}
	}
	if got := outbox.OutcomeOf(maria.Classify(errors.New("read: connection reset by peer"))); got != outbox.OutcomeUnknown {
		t.Errorf("reset: %s", got)
	}
}

// killer is a backend that SIGKILLs its own process before or after the
// real POST: perch dying between writing a message down and the daemon's
// answer.
type killer struct {
	*maria.Backend
	after bool
}

func (k killer) Send(ctx context.Context, task string, m client.Message) (client.SendResult, error) {
	if !k.after {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	r, err := k.Backend.Send(ctx, task, m)
	if k.after {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	return r, err
}

// TestHelperProcess is a perch process of TestKillBetweenWriteAndPost; it
// does nothing unless started by it.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("MARIA_OUTBOX_HELPER")
	if mode == "" {
		t.Skip("helper process only")
	}
	cl, err := maria.NewClient(os.Getenv("MARIA_OUTBOX_URL"))
	if err != nil {
		panic(err)
	}
	var be client.Backend = maria.New(cl)
	switch mode {
	case "kill-before":
		be = killer{maria.New(cl), false}
	case "kill-after":
		be = killer{maria.New(cl), true}
	}
	d := &outbox.Deliverer{Store: outbox.NewFileStore(os.Getenv("MARIA_OUTBOX_DIR")), Backend: be}
	rs, err := d.Flush(context.Background(), os.Getenv("MARIA_OUTBOX_TASK"))
	for _, r := range rs {
		fmt.Printf("%s %s recovered=%v\n", r.Message.ID, r.Message.State, r.Message.Recovered)
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	os.Exit(0)
}

func helper(t *testing.T, mode, dir, base, task string) (string, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MARIA_OUTBOX_HELPER="+mode, "MARIA_OUTBOX_DIR="+dir, "MARIA_OUTBOX_URL="+base, "MARIA_OUTBOX_TASK="+task)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// perch is SIGKILLed after writing a message down, before or after its
// POST; the next perch delivers it exactly once, checked against the fake
// daemon over loopback.
func TestKillBetweenWriteAndPost(t *testing.T) {
	for _, mode := range []string{"kill-before", "kill-after"} {
		t.Run(mode, func(t *testing.T) {
			d, base := fake(t, "head", 20)
			id, err := d.CreateTask(fakedaemon.CreateRequest{Cwd: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			s := outbox.NewFileStore(t.TempDir())
			texts := []string{"first follow-up", "second follow-up"}
			for _, text := range texts {
				if _, err := s.Update(id, func(q *outbox.Queue) error {
					_, err := q.Add(text, outbox.IntentSend, false, time.Now())
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			out, err := helper(t, mode, s.Dir(), base, id)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("helper was not killed: %v\n%s", err, out)
			}
			q, _ := s.Load(id)
			if p := q.Pending(); len(p) != 2 || p[0].State != outbox.Sending {
				t.Fatalf("after the kill: %+v", p)
			}
			out, err = helper(t, "recover", s.Dir(), base, id)
			if err != nil {
				t.Fatalf("recovering perch: %v\n%s", err, out)
			}
			if got := d.Received(id); strings.Join(got, "|") != strings.Join(texts, "|") {
				t.Fatalf("daemon received %q, want %q", got, texts)
			}
			q, _ = s.Load(id)
			h := q.History()
			if q.Len() != 0 || len(h) != 2 || h[0].Recovered != (mode == "kill-after") {
				t.Fatalf("pending %d, history %+v\n%s", q.Len(), h, out)
			}
		})
	}
}

// TestDeliverThroughMaria: the outbox delivers through the maria backend
// exactly once, and a message left Sending is recognised from the
// replay instead of being sent again.
func TestDeliverThroughMaria(t *testing.T) {
	d := fakedaemon.New(fakedaemon.Options{Speed: 20, Seed: 7})
	srv, err := d.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	id, err := d.CreateTask(fakedaemon.CreateRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := maria.Open(client.Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	store := outbox.NewMemStore()
	dl := &outbox.Deliverer{Store: store, Backend: b}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := store.Update(id, func(q *outbox.Queue) error {
		_, err := q.Add("hello", outbox.IntentSend, false, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	rs, err := dl.Flush(ctx, id)
	if err != nil || len(rs) != 1 || !rs[0].Delivered {
		t.Fatalf("flush %+v %v", rs, err)
	}
	// As if perch died after posting: the message is Sending again, and
	// the daemon has it.
	if _, err := store.Update(id, func(q *outbox.Queue) error {
		m, err := q.Add("hello", outbox.IntentSend, false, time.Now())
		if err != nil {
			return err
		}
		return q.MarkSending(m.ID, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Send(ctx, id, client.Message{Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	done, err := dl.Recover(ctx, id)
	if err != nil || len(done) != 1 {
		t.Fatalf("recover %+v %v", done, err)
	}
	if got := d.Received(id); len(got) != 2 {
		t.Fatalf("daemon received %q", got)
	}
}
