package live_test

import (
	"context"
	"testing"
	"time"

	"github.com/perch-tui/perch/backend"
	mariab "github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/outbox/live"
)

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
	dl := &outbox.Deliverer{Store: store, Backend: live.New(b)}
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
