package outbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// scripted is a backend whose Follow plays updates, then waits (or
// returns followErr); Send answers sendErr or res.
type scripted struct {
	client.Backend // nil: any other method panics
	caps           client.Capabilities
	updates        []client.Update
	followErr      error
	sendErr        error
	res            client.SendResult
	sent           []string
}

func (s *scripted) Name() string                      { return "scripted" }
func (s *scripted) URL() string                       { return "http://127.0.0.1:1/v1" }
func (s *scripted) Capabilities() client.Capabilities { return s.caps }
func (s *scripted) Follow(ctx context.Context, _ string, on func(client.Update)) error {
	for _, u := range s.updates {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		on(u)
	}
	if s.followErr != nil {
		return s.followErr
	}
	<-ctx.Done()
	return ctx.Err()
}

func (s *scripted) Send(_ context.Context, _ string, m client.Message) (client.SendResult, error) {
	if s.sendErr != nil {
		return client.SendResult{}, s.sendErr
	}
	s.sent = append(s.sent, m.Text)
	return s.res, nil
}

func user(id, text string, at time.Time) events.Event {
	return events.Event{Kind: events.KindUserMessage, ID: id, Text: text, Created: at}
}

func TestReceived(t *testing.T) {
	defer goleak.VerifyNone(t)
	now := time.Now()
	broken := sse.ConnState{Phase: sse.PhaseReconnecting, Err: errors.New("EOF")}
	failed := sse.ConnState{Phase: sse.PhaseFailed, Err: errors.New("401 Unauthorized")}
	live := sse.ConnState{Phase: sse.PhaseLive}
	queued := events.Event{Kind: events.KindQueueSnapshot, Queue: []events.QueuedMessage{{ID: "q1", Text: "hi"}, {ID: "q2", Text: "other"}}}
	for _, tc := range []struct {
		name      string
		updates   []client.Update
		followErr error
		want      int
		err       string
	}{
		{"counted up to Synced", []client.Update{
			{State: &live},
			{Events: []events.Event{user("1", "hi", now), user("2", "hi", now.Add(-time.Hour)), user("3", "other", now), user("4", "hi!", now)}},
			{Synced: true},
			{Events: []events.Event{user("5", "hi", now)}}, // after Synced: not looked at
		}, nil, 1, ""},
		{"messages without a time count", []client.Update{
			{Events: []events.Event{user("1", "hi", time.Time{})}, Synced: true},
		}, nil, 1, ""},
		{"queued messages count", []client.Update{
			{Events: []events.Event{user("1", "hi", now), queued}, Synced: true},
		}, nil, 2, ""},
		{"a reset drops what came before", []client.Update{
			{Events: []events.Event{user("1", "hi", now), user("2", "hi", now)}},
			{Reset: true, Events: []events.Event{user("1", "hi", now)}, Synced: true},
		}, nil, 1, ""},
		{"a break before Synced is an error", []client.Update{
			{Events: []events.Event{user("1", "hi", now)}},
			{State: &broken},
			{Synced: true},
		}, nil, 0, "broke before its history was in: EOF"},
		{"a refusal is an error", []client.Update{{State: &failed}}, nil, 0, "401 Unauthorized"},
		{"a stream that ends early is an error", []client.Update{
			{Events: []events.Event{user("1", "hi", now)}},
		}, errors.New("the server closed the stream"), 0, "the server closed the stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &scripted{updates: tc.updates, followErr: tc.followErr}
			n, err := Received(context.Background(), b, "s", "hi", now.Add(-time.Minute))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "127.0.0.1:1") {
					t.Fatalf("err = %v, want one naming the server and saying %q", err, tc.err)
				}
				return
			}
			if err != nil || n != tc.want {
				t.Fatalf("Received = %d, %v; want %d", n, err, tc.want)
			}
		})
	}
}

// A session that never says Synced: Received gives up at its deadline
// (ReplayTimeout, or the caller's if sooner) instead of hanging.
func TestReceivedTimeout(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := &scripted{updates: []client.Update{{Events: []events.Event{user("1", "hi", time.Time{})}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := Received(ctx, b, "s", "hi", time.Time{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestSendClasses(t *testing.T) {
	busyErr := fmt.Errorf("thread t: agent run r is running: %w", client.ErrBusy)
	for _, tc := range []struct {
		name    string
		caps    client.Capabilities
		err     error
		res     client.SendResult
		outcome Outcome
		running bool
	}{
		{"busy is not a failure", client.Capabilities{Send: true}, busyErr, client.SendResult{}, OutcomeBusy, false},
		{"retryable kept", client.Capabilities{Send: true}, client.Retryable(errors.New("connection refused")), client.SendResult{}, OutcomeRetry, false},
		{"permanent kept", client.Capabilities{Send: true}, client.Permanent(errors.New("404")), client.SendResult{}, OutcomePermanent, false},
		{"unsupported is permanent", client.Capabilities{}, fmt.Errorf("pynchy: %w", client.ErrUnsupported), client.SendResult{}, OutcomePermanent, false},
		{"anything else is unknown", client.Capabilities{Send: true}, errors.New("EOF"), client.SendResult{}, OutcomeUnknown, false},
		{"a start on a server without a queue runs", client.Capabilities{Send: true}, nil, client.SendResult{ID: "run-1"}, "", true},
		{"maria queues", client.Capabilities{Send: true, ServerQueue: true}, nil, client.SendResult{ID: "m1"}, "", false},
		{"pynchy pipes", client.Capabilities{Send: true, PipesFollowUps: true}, nil, client.SendResult{}, "", false},
		{"queued is not running", client.Capabilities{Send: true}, nil, client.SendResult{ID: "x", Queued: true}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Deliverer{Store: NewMemStore(), Backend: &scripted{caps: tc.caps, sendErr: tc.err, res: tc.res}}
			rec, running, err := d.send(context.Background(), "s", Message{Text: "hi"})
			if tc.err == nil {
				if err != nil || rec.ID != tc.res.ID || rec.Queued != tc.res.Queued || running != tc.running {
					t.Fatalf("send = %+v running %v, %v", rec, running, err)
				}
				return
			}
			if got := OutcomeOf(err); got != tc.outcome || !errors.Is(err, tc.err) {
				t.Fatalf("outcome %q (err %v), want %q wrapping %v", got, err, tc.outcome, tc.err)
			}
			if busy := errors.Is(err, ErrBusy); busy != (tc.outcome == OutcomeBusy) {
				t.Fatalf("errors.Is(ErrBusy) = %v", busy)
			}
		})
	}
}
