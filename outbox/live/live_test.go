package live

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/perch-tui/perch/backend"
	mariab "github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/outbox"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scripted is a backend whose Follow plays updates, then waits.
type scripted struct {
	backend.Backend
	updates []backend.Update
	sendErr error
}

func (s *scripted) Follow(ctx context.Context, _ string, on func(backend.Update)) error {
	for _, u := range s.updates {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		on(u)
	}
	<-ctx.Done()
	return ctx.Err()
}

func (s *scripted) Send(context.Context, string, backend.Message) (backend.SendResult, error) {
	if s.sendErr != nil {
		return backend.SendResult{}, s.sendErr
	}
	return backend.SendResult{ID: "m1", Queued: true}, nil
}

func user(id, text string, at time.Time) events.Event {
	return events.Event{Kind: events.KindUserMessage, ID: id, Text: text, Created: at}
}

func TestReceived(t *testing.T) {
	now := time.Now()
	broken := client.ConnState{Phase: client.PhaseReconnecting, Err: errors.New("EOF")}
	for _, tc := range []struct {
		name    string
		updates []backend.Update
		want    int
		err     string
	}{
		{"counted up to Synced", []backend.Update{
			{Events: []events.Event{user("1", "hi", now), user("2", "hi", now.Add(-time.Hour)), user("3", "other", now)}},
			{Synced: true},
			{Events: []events.Event{user("4", "hi", now)}}, // after Synced: not looked at
		}, 1, ""},
		{"a reset drops what came before", []backend.Update{
			{Events: []events.Event{user("1", "hi", now)}},
			{Reset: true, Events: []events.Event{user("1", "hi", now), user("2", "hi", time.Time{})}, Synced: true},
		}, 2, ""},
		{"a break before Synced is an error", []backend.Update{
			{Events: []events.Event{user("1", "hi", now)}},
			{State: &broken},
			{Synced: true},
		}, 0, "broke"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := New(&scripted{updates: tc.updates})
			n, err := o.Received(context.Background(), "s", "hi", now.Add(-time.Minute))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || n != tc.want {
				t.Fatalf("got %d, %v; want %d", n, err, tc.want)
			}
		})
	}
	// Never synced: the timeout answers.
	o := &Outbox{Backend: &scripted{}, Timeout: 100 * time.Millisecond}
	if _, err := o.Received(context.Background(), "s", "hi", now); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
}

func TestSend(t *testing.T) {
	rec, err := New(&scripted{}).Send(context.Background(), "s", outbox.Message{Text: "x"})
	if err != nil || rec.ID != "m1" || !rec.Queued {
		t.Fatalf("%+v %v", rec, err)
	}
	// Busy without a server queue: certainly not sent, held for later.
	_, err = New(&scripted{sendErr: fmt.Errorf("run r1: %w", backend.ErrBusy)}).Send(context.Background(), "s", outbox.Message{Text: "x"})
	if outbox.OutcomeOf(err) != outbox.OutcomeRetry || !errors.Is(err, backend.ErrBusy) {
		t.Fatalf("busy: %v (%v)", err, outbox.OutcomeOf(err))
	}
	// Other errors keep the backend's own classification.
	perm := outbox.Permanent(errors.New("404"))
	if _, err := New(&scripted{sendErr: perm}).Send(context.Background(), "s", outbox.Message{Text: "x"}); outbox.OutcomeOf(err) != outbox.OutcomePermanent {
		t.Fatalf("permanent: %v", err)
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
	b, err := mariab.Open(backend.Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	store := outbox.NewMemStore()
	dl := &outbox.Deliverer{Store: store, Backend: New(b)}
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
	if _, err := b.Send(ctx, id, backend.Message{Text: "hello"}); err != nil {
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
