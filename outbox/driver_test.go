package outbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// fakeSuna is one thread on a server without a queue, scripted in time:
// a follow-up to an idle thread starts a run that takes runDur; while a
// run is on, Send answers ErrBusy, except during the first lag of it,
// when the server's check does not see the new run yet (Suna's run
// status is read, not pushed). A start while a run is really on is an
// overlap: the thing perch must never cause.
type fakeSuna struct {
	scripted
	lag, runDur time.Duration

	mu          sync.Mutex
	activeUntil time.Time // a run is on until then
	visibleFrom time.Time // …and the server's check sees it from then
	starts      []string
	ends        []time.Time // when each start's run ended
	startedAt   []time.Time
	overlaps    int
	busy        int // ErrBusy answers
	history     []events.Event
	subs        map[int]func(client.Update)
	nsub        int
	timers      sync.WaitGroup
	stopped     bool
}

func newFakeSuna(lag, runDur, firstRun time.Duration) *fakeSuna {
	f := &fakeSuna{lag: lag, runDur: runDur, subs: map[int]func(client.Update){}}
	f.caps = client.Capabilities{Send: true, Cancel: true, Create: true}
	now := time.Now()
	f.history = []events.Event{user("u0", "the first prompt", now), runState(events.StatusGenerating)}
	f.activeUntil, f.visibleFrom = now.Add(firstRun), now
	f.later(firstRun, func() { f.end() })
	return f
}

func runState(s string) events.Event {
	return events.Event{Kind: events.KindRunState, RunStatus: s}
}

// later runs fn after d unless the fake was closed.
func (f *fakeSuna) later(d time.Duration, fn func()) {
	f.timers.Add(1)
	time.AfterFunc(d, func() {
		defer f.timers.Done()
		f.mu.Lock()
		stopped := f.stopped
		f.mu.Unlock()
		if !stopped {
			fn()
		}
	})
}

// close waits for the scripted timers.
func (f *fakeSuna) close() {
	f.mu.Lock()
	f.stopped = true
	f.mu.Unlock()
	f.timers.Wait()
}

// emit appends to the history and tells every follower; f.mu is held.
func (f *fakeSuna) emit(evs ...events.Event) {
	f.history = append(f.history, evs...)
	for _, on := range f.subs {
		on(client.Update{Events: evs})
	}
}

func (f *fakeSuna) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.emit(events.Event{Kind: events.KindAssistantMessage, Text: "done"}, runState(events.StatusIdle))
}

func (f *fakeSuna) Follow(ctx context.Context, _ string, on func(client.Update)) error {
	live := sse.ConnState{Phase: sse.PhaseLive}
	f.mu.Lock()
	f.nsub++
	id := f.nsub
	on(client.Update{State: &live, Reset: true, Events: slices.Clone(f.history), Synced: true})
	f.subs[id] = on
	f.mu.Unlock()
	<-ctx.Done()
	f.mu.Lock()
	delete(f.subs, id)
	f.mu.Unlock()
	return ctx.Err()
}

func (f *fakeSuna) Send(_ context.Context, _ string, m client.Message) (client.SendResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if now.Before(f.activeUntil) && !now.Before(f.visibleFrom) {
		f.busy++
		return client.SendResult{}, fmt.Errorf("thread t: agent run is running: %w", client.ErrBusy)
	}
	if now.Before(f.activeUntil) {
		f.overlaps++
	}
	f.starts = append(f.starts, m.Text)
	f.startedAt = append(f.startedAt, now)
	f.activeUntil, f.visibleFrom = now.Add(f.runDur), now.Add(f.lag)
	n := len(f.starts)
	f.emit(user(fmt.Sprint("u", n), m.Text, now))
	f.later(f.lag, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.emit(runState(events.StatusGenerating))
	})
	f.later(f.runDur, func() {
		f.mu.Lock()
		f.ends = append(f.ends, time.Now())
		f.mu.Unlock()
		f.end()
	})
	return client.SendResult{ID: fmt.Sprint("run-", n)}, nil
}

type sunaReport struct {
	starts   []string
	overlaps int
	busy     int
}

func (f *fakeSuna) report() sunaReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sunaReport{slices.Clone(f.starts), f.overlaps, f.busy}
}

// Three follow-ups for a running Suna thread (two typed and sent, one
// held, in that queue order): each starts its run only after the
// previous run ended, in order, exactly once, while something keeps
// calling Flush as a reconnecting UI does. The Driver's idle signal is
// the only thing that lets the next one go.
func TestHeldFollowUpsStartOneRunAtATime(t *testing.T) {
	const lag, runDur = 80 * time.Millisecond, 300 * time.Millisecond
	f := newFakeSuna(lag, runDur, runDur)
	defer f.close()
	s := NewMemStore()
	d := &Deliverer{Store: s, Backend: f}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	put := func(text string, intent Intent) Message {
		t.Helper()
		var m Message
		if _, err := s.Update("t", func(q *Queue) error {
			var err error
			m, err = q.Add(text, intent, false, time.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m1 := put("one: run the tests", IntentSend)
	rs, err := d.Flush(ctx, "t")
	if !errors.Is(err, ErrBusy) || !errors.Is(err, client.ErrBusy) || len(rs) != 1 || !rs[0].Busy {
		t.Fatalf("a follow-up to a running thread: %+v %v", rs, err)
	}
	if m := rs[0].Message; m.ID != m1.ID || m.State != Held || !m.Waiting || m.Err != "" {
		t.Fatalf("not held as waiting: %+v", m)
	}
	put("two: then fix what failed", IntentHold)
	put("three: and commit", IntentSend)
	if _, err := d.Flush(ctx, "t"); !errors.Is(err, ErrBusy) {
		t.Fatalf("paused flush: %v", err)
	}
	if r := f.report(); r.busy != 1 || len(r.starts) != 0 {
		t.Fatalf("while paused the backend was asked again: %+v", r)
	}

	// A UI that reconnects now and then flushes.
	flushDone := make(chan struct{})
	flushCtx, stopFlush := context.WithCancel(ctx)
	go func() {
		defer close(flushDone)
		tick := time.NewTicker(15 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-flushCtx.Done():
				return
			case <-tick.C:
				d.Flush(flushCtx, "t")
			}
		}
	}()
	var attempts []Result
	dr := &Driver{Deliverer: d, Pace: &Pace{Settle: 40 * time.Millisecond, TurnWait: 20 * time.Second, StoppedIsIdle: true},
		OnResult: func(r Result, err error) { attempts = append(attempts, r) }}
	err = dr.Run(ctx, "t", true)
	stopFlush()
	<-flushDone
	if err != nil {
		t.Fatalf("Run: %v (attempts %+v)", err, attempts)
	}
	r := f.report()
	want := []string{"one: run the tests", "two: then fix what failed", "three: and commit"}
	if !slices.Equal(r.starts, want) {
		t.Fatalf("runs started for %q, want %q", r.starts, want)
	}
	if r.overlaps != 0 {
		t.Fatalf("%d runs started beside a running one", r.overlaps)
	}
	// Each start came after the previous run's end.
	f.mu.Lock()
	for i := 1; i < len(f.startedAt); i++ {
		if i-1 < len(f.ends) && f.startedAt[i].Before(f.ends[i-1]) {
			t.Errorf("run %d started %v before run %d ended", i+1, f.ends[i-1].Sub(f.startedAt[i]), i)
		}
	}
	f.mu.Unlock()
	q, err := s.Load("t")
	if err != nil {
		t.Fatal(err)
	}
	if q.Len() != 0 || len(q.History()) != 3 {
		t.Fatalf("pending %+v, history %d", q.Pending(), len(q.History()))
	}
	for _, m := range q.History() {
		if m.Recovered || m.DaemonID == "" {
			t.Errorf("%+v", m)
		}
	}
	t.Logf("%d Next(Idle) attempts, %d busy answers", len(attempts), r.busy)
}

// The control: a caller that says "idle" as soon as the message was
// accepted (not waiting for its run to be seen) starts a second run
// beside the first during the server's lag, and the fake notices. This
// is what the Driver's wait and the Deliverer's pause prevent.
func TestEagerIdleSignalOverlaps(t *testing.T) {
	const lag, runDur = 200 * time.Millisecond, 400 * time.Millisecond
	f := newFakeSuna(lag, runDur, 0)
	defer f.close()
	s := NewMemStore()
	d := &Deliverer{Store: s, Backend: f}
	ctx := context.Background()
	for _, text := range []string{"a", "b"} {
		if _, err := s.Update("t", func(q *Queue) error {
			_, err := q.Add(text, IntentHold, false, time.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(5 * time.Millisecond) // the first run (0 long) is over
	for i := 0; i < 2; i++ {
		if r, err := d.Next(ctx, "t", Idle); err != nil || !r.Delivered {
			t.Fatalf("%+v %v", r, err)
		}
	}
	if r := f.report(); r.overlaps != 1 {
		t.Fatalf("the fake did not see the overlap: %+v", r)
	}
}

// A follow that fails for good ends Run with an error naming the server.
func TestDriverFollowFails(t *testing.T) {
	b := &scripted{followErr: errors.New("401 Unauthorized")}
	s := NewMemStore()
	if _, err := s.Update("t", func(q *Queue) error {
		_, err := q.Add("x", IntentHold, false, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	dr := &Driver{Deliverer: &Deliverer{Store: s, Backend: b}}
	err := dr.Run(context.Background(), "t", true)
	if err == nil || !errors.Is(err, b.followErr) || !strings.Contains(err.Error(), "127.0.0.1:1") || !strings.Contains(err.Error(), "session t") {
		t.Fatalf("err = %v", err)
	}
	// Nothing due: Run does not even follow.
	empty := &Driver{Deliverer: &Deliverer{Store: NewMemStore(), Backend: b}}
	if err := empty.Run(context.Background(), "t", true); err != nil {
		t.Fatal(err)
	}
}

// idleThread is a sunaLike session whose stream says, once, that its
// history is in and it is idle.
type idleThread struct{ sunaLike }

func (b *idleThread) Follow(ctx context.Context, _ string, on func(client.Update)) error {
	live := sse.ConnState{Phase: sse.PhaseLive}
	on(client.Update{State: &live, Events: []events.Event{runState(events.StatusIdle)}, Synced: true})
	<-ctx.Done()
	return ctx.Err()
}

// Auto-delivery paused, a message held, two perches attached to the idle
// session (each its own store on the same files, as two processes);
// perch queue --resume from a third: the message goes within a second,
// exactly once.
func TestResumeFromElsewhereDeliversOnce(t *testing.T) {
	dir := t.TempDir()
	const url = "http://127.0.0.1:8090/v1"
	be := &idleThread{sunaLike{stubBackend: stubBackend{noQueue: true}}}
	cli := OpenFileStore(dir, url)
	if _, err := cli.Update(task, func(q *Queue) error {
		if err := q.SetPaused(true); err != nil {
			return err
		}
		_, err := q.Add("X", IntentHold, false, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		dr := &Driver{Deliverer: &Deliverer{Store: OpenFileStore(dir, url), Backend: be},
			Pace: &Pace{Settle: 100 * time.Millisecond, StoppedIsIdle: true}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := dr.Run(ctx, task, false); !errors.Is(err, context.Canceled) {
				t.Errorf("Run: %v", err)
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	time.Sleep(500 * time.Millisecond) // both settled on the idle session
	if got := be.sent(); len(got) != 0 {
		t.Fatalf("paused, yet sent %q", got)
	}
	start := time.Now()
	if _, err := cli.Update(task, func(q *Queue) error { return q.SetPaused(false) }); err != nil {
		t.Fatal(err)
	}
	for len(be.sent()) == 0 {
		if time.Since(start) > time.Second {
			t.Fatal("resumed on an idle session, still held after a second")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("delivered %v after the resume", time.Since(start).Round(time.Millisecond))
	time.Sleep(700 * time.Millisecond) // the other perch saw the change too
	if got := be.sent(); !slices.Equal(got, []string{"X"}) {
		t.Fatalf("sent %q, want X once", got)
	}
	if q := load(t, cli, task); q.Len() != 0 || len(q.History()) != 1 {
		t.Fatalf("pending %+v", q.Pending())
	}
}
