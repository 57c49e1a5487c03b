package outbox

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
)

// fakeBackend is an agent with a transcript; fail decides each Send's fate.
type fakeBackend struct {
	stubBackend
	mu   sync.Mutex
	got  []string    // texts received, in order
	at   []time.Time // when
	now  func() time.Time
	fail func(m Message) (deliver bool, err error)
}

func (b *fakeBackend) Send(_ context.Context, _ string, m client.Message) (client.SendResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	deliver, err := true, error(nil)
	if b.fail != nil {
		deliver, err = b.fail(Message{Text: m.Text, WebSearch: m.WebSearch})
	}
	if deliver {
		b.got = append(b.got, m.Text)
		b.at = append(b.at, b.now())
	}
	return client.SendResult{ID: fmt.Sprint("d", len(b.got))}, err
}

func (b *fakeBackend) Received(_ context.Context, _ string, text string, since time.Time) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for i, g := range b.got {
		if g == text && !b.at[i].Before(since) {
			n++
		}
	}
	return n, nil
}

func (b *fakeBackend) texts() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.got)
}

func newDeliverer(s Store) (*Deliverer, *fakeBackend) {
	b := &fakeBackend{now: time.Now}
	return &Deliverer{Store: s, Backend: b}, b
}

// Three held messages are edited, reordered and one deleted, then
// delivered in the new order, one per idle, each exactly once.
func TestDeliverHeldInNewOrder(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore()
	d, b := newDeliverer(s)
	a := add(t, s, task, "first", IntentHold)
	bb := add(t, s, task, "second", IntentHold)
	c := add(t, s, task, "third", IntentHold)
	if _, err := s.Update(task, func(q *Queue) error {
		if err := q.Edit(a.ID, "first, edited"); err != nil {
			return err
		}
		if err := q.Move(c.ID, 0); err != nil {
			return err
		}
		return q.Drop(bb.ID, false)
	}); err != nil {
		t.Fatal(err)
	}
	// Busy: held messages wait.
	if r, err := d.Next(ctx, task, Busy); err != nil || r.Message.ID != "" {
		t.Fatalf("busy: %+v %v", r, err)
	}
	for i := 0; i < 4; i++ {
		r, err := d.Next(ctx, task, Idle)
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 && (!r.Delivered || r.Message.State != Sent || r.Message.DaemonID == "") {
			t.Fatalf("idle %d: %+v", i, r)
		}
		if i >= 2 && r.Message.ID != "" {
			t.Fatalf("nothing should be left: %+v", r)
		}
	}
	if got := b.texts(); !slices.Equal(got, []string{"third", "first, edited"}) {
		t.Fatalf("delivered %q", got)
	}
}

func TestDeliverFailures(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore()
	d, b := newDeliverer(s)
	down := errors.New("connection refused")
	b.fail = func(Message) (bool, error) { return false, client.Retryable(down) }
	m := add(t, s, task, "sent while down", IntentSend)
	h := add(t, s, task, "held", IntentHold)
	r, err := d.Next(ctx, task, Busy)
	if !errors.Is(err, down) || r.Delivered || r.Message.State != Held || r.Message.Err == "" {
		t.Fatalf("down: %+v %v", r, err)
	}
	// Back up: Flush sends what the user sent, not what they held.
	b.fail = nil
	rs, err := d.Flush(ctx, task)
	if err != nil || len(rs) != 1 || rs[0].Message.ID != m.ID {
		t.Fatalf("flush: %+v %v", rs, err)
	}
	// Permanent: failed, skipped by Next, kept with the reason.
	b.fail = func(Message) (bool, error) { return false, client.Permanent(errors.New("404 task not found")) }
	if _, err := d.Release(ctx, task, h.ID[:3]); err == nil {
		t.Fatal("no error")
	}
	q := load(t, s, task)
	if got, _ := q.Get(h.ID); got.State != Failed || got.Err != "404 task not found" {
		t.Fatalf("permanent: %+v", got)
	}
	if r, _ := d.Next(ctx, task, Idle); r.Message.ID != "" {
		t.Fatal("a failed message was picked")
	}
	// Release tries it again.
	b.fail = nil
	if r, err := d.Release(ctx, task, ""); err != nil || !r.Delivered {
		t.Fatalf("release: %+v %v", r, err)
	}
	if got := b.texts(); !slices.Equal(got, []string{"sent while down", "held"}) {
		t.Fatalf("%q", got)
	}
	if _, err := d.Release(ctx, task, ""); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("release on empty: %v", err)
	}
}

// An answer that never came: the message stays Sending; the next attempt
// asks the backend first, and sends again only if it does not have it.
func TestDeliverUnknownOutcome(t *testing.T) {
	ctx := context.Background()
	for _, arrived := range []bool{true, false} {
		t.Run(fmt.Sprint("arrived=", arrived), func(t *testing.T) {
			s := NewMemStore()
			d, b := newDeliverer(s)
			// The same text went out before: the count must not be fooled.
			add(t, s, task, "continue", IntentSend)
			if _, err := d.Flush(ctx, task); err != nil {
				t.Fatal(err)
			}
			add(t, s, task, "continue", IntentSend)
			b.fail = func(Message) (bool, error) { return arrived, errors.New("timeout awaiting response") }
			r, err := d.Next(ctx, task, Busy)
			if err == nil || r.Message.State != Sending || r.Message.Err == "" {
				t.Fatalf("unknown: %+v %v", r, err)
			}
			// Blocked until resolved: nothing overtakes it.
			b.fail = nil
			add(t, s, task, "after", IntentSend)
			if _, err := d.Flush(ctx, task); err != nil {
				t.Fatal(err)
			}
			want := []string{"continue", "continue", "after"}
			if got := b.texts(); !slices.Equal(got, want) {
				t.Fatalf("delivered %q, want %q", got, want)
			}
			q := load(t, s, task)
			h := q.History()
			if q.Len() != 0 || len(h) != 3 || h[1].Recovered != arrived {
				t.Fatalf("pending %d, history %+v", q.Len(), h)
			}
		})
	}
}

func TestDropSending(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore()
	d, b := newDeliverer(s)
	m := add(t, s, task, "lost answer", IntentSend)
	b.fail = func(Message) (bool, error) { return false, errors.New("EOF") }
	d.Next(ctx, task, Busy)
	unlock, _ := s.LockDelivery(ctx, task)
	if _, err := d.Drop(ctx, task, m.ID); err == nil {
		t.Fatal("dropped a message another perch is delivering")
	}
	unlock()
	if _, err := d.Drop(ctx, task, m.ID); err != nil {
		t.Fatal(err)
	}
	if q := load(t, s, task); q.Len() != 0 {
		t.Fatal("not dropped")
	}
}

// TestDeliverChaos: random failures of every kind (daemon down, the
// request lost, the answer lost, as when perch dies before or after its
// POST); in the end every message arrives exactly once, in order, even
// with repeated texts.
func TestDeliverChaos(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		s := NewMemStore()
		d, b := newDeliverer(s)
		b.fail = func(Message) (bool, error) {
			switch rng.IntN(6) {
			case 0:
				return false, client.Retryable(errors.New("down"))
			case 1:
				return true, errors.New("answer lost")
			case 2:
				return false, errors.New("request lost")
			}
			return true, nil
		}
		var want []string
		for i := 0; i < 8; i++ {
			text := fmt.Sprintf("m%d", i%3) // repeated texts on purpose
			add(t, s, task, text, IntentSend)
			want = append(want, text)
		}
		ctx := context.Background()
		for round := 0; round < 400; round++ {
			q := load(t, s, task)
			if q.Len() == 0 {
				break
			}
			d.Next(ctx, task, Busy)
		}
		if q := load(t, s, task); q.Len() != 0 {
			t.Fatalf("seed %d: %d messages never delivered", seed, q.Len())
		}
		if got := b.texts(); !slices.Equal(got, want) {
			t.Fatalf("seed %d: delivered %q, want %q", seed, got, want)
		}
	}
}
