package outbox

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// sunaLike is a session on a server without a queue: a follow-up to an
// idle session starts a run; while the run is on, Send answers busy.
type sunaLike struct {
	stubBackend
	mu      sync.Mutex
	running bool
	got     []string
}

func (b *sunaLike) Send(_ context.Context, _ string, m client.Message) (client.SendResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running {
		return client.SendResult{}, fmt.Errorf("thread t: a run is running: %w", client.ErrBusy)
	}
	b.running = true
	b.got = append(b.got, m.Text)
	return client.SendResult{ID: fmt.Sprint("run-", len(b.got))}, nil
}

func (b *sunaLike) Received(_ context.Context, _, text string, _ time.Time) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, g := range b.got {
		if g == text {
			n++
		}
	}
	return n, nil
}

func (b *sunaLike) sent() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.got)
}

func (b *sunaLike) setRunning(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.running = on
}

// paceRig runs a Pace and a Deliverer the way their callers do (the UI,
// Driver), on a clock of its own: steps tell what the session shows and
// what the user does, then make every call the Pace asks for.
type paceRig struct {
	t     *testing.T
	now   time.Time
	store *MemStore
	be    *sunaLike
	d     *Deliverer
	p     *Pace
	tl    *events.Timeline
}

func newPaceRig(t *testing.T) *paceRig {
	s := NewMemStore()
	be := &sunaLike{stubBackend: stubBackend{noQueue: true}}
	r := &paceRig{t: t, now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), store: s, be: be,
		d: &Deliverer{Store: s, Backend: be}, tl: events.NewTimeline()}
	r.p = NewPace(be.Capabilities())
	r.p.Queue(load(t, s, task))
	return r
}

func (r *paceRig) show(evs ...events.Event) {
	for _, ev := range evs {
		r.tl.Apply(ev)
		r.p.Event(ev, r.tl.Status())
	}
}

func (r *paceRig) change(fn func(q *Queue) error) {
	r.t.Helper()
	q, err := r.store.Update(task, fn)
	if err != nil {
		r.t.Fatal(err)
	}
	r.p.Queue(q) // as a watch of the store tells it, whoever changed it
}

// step runs one word of a script: see paceScripts.
func (r *paceRig) step(word string) {
	r.t.Helper()
	verb, arg, _ := strings.Cut(word, " ")
	ctx := context.Background()
	switch verb {
	case "idle": // the session's history is in, idle
		r.show(events.Event{Kind: events.KindRunState, RunStatus: events.StatusIdle})
	case "run": // the run of arg shows (started by perch, or by someone)
		r.be.setRunning(true)
		r.show(events.Event{Kind: events.KindUserMessage, ID: "u-" + arg, Text: arg, Created: r.now},
			events.Event{Kind: events.KindRunState, RunStatus: events.StatusGenerating})
	case "end": // the run ends (end X: the run of X began and ended unseen)
		r.be.setRunning(false)
		if arg != "" {
			r.show(events.Event{Kind: events.KindUserMessage, ID: "u-" + arg, Text: arg, Created: r.now})
		}
		r.show(events.Event{Kind: events.KindAssistantMessage, Text: "done"},
			events.Event{Kind: events.KindRunState, RunStatus: events.StatusIdle})
	case "send": // the user sends arg (Enter): written down, then Flush
		r.change(func(q *Queue) error { _, err := q.Add(arg, IntentSend, false, r.now); return err })
		rs, err := r.d.Flush(ctx, task)
		r.p.Done(r.now, ActNone, rs, err)
		r.p.Queue(load(r.t, r.store, task))
	case "hold":
		r.change(func(q *Queue) error { _, err := q.Add(arg, IntentHold, false, r.now); return err })
	case "pause", "resume": // perch queue --pause / --resume, from anywhere
		r.change(func(q *Queue) error { return q.SetPaused(verb == "pause") })
	case "wait": // time passes: the settle time
		r.now = r.now.Add(DefaultSettle)
	case "sent":
		want := strings.Fields(arg)
		if got := r.be.sent(); !slices.Equal(got, want) {
			r.t.Fatalf("sent %q, want %q", got, want)
		}
		return
	default:
		r.t.Fatalf("unknown step %q", word)
	}
	r.p.Session(r.now, true, r.tl.Status())
	for {
		act, _ := r.p.Step(r.now)
		var rs []Result
		var err error
		switch act {
		case ActNone:
			return
		case ActNext:
			var res Result
			res, err = r.d.Next(ctx, task, Idle)
			if res.Message.ID != "" {
				rs = []Result{res}
			}
		case ActFlush:
			rs, err = r.d.Flush(ctx, task)
		}
		r.p.Done(r.now, act, rs, err)
		r.p.Queue(load(r.t, r.store, task))
	}
}

// paceScripts: what the session shows, what the user does, and what must
// have been posted by then (on a server without a queue).
var paceScripts = []struct {
	name   string
	script string
}{
	{"a follow-up on an idle session goes at once",
		"idle, wait, send A, sent A"},
	{"a follow-up after a held message's run goes (it stuck as sent, not delivered)",
		"idle, wait, send A, run A, send B, sent A, end, wait, sent A B, run B, end, wait, send C, sent A B C"},
	{"the same with B's run seen only as its message and its end",
		"idle, wait, send A, run A, send B, end, wait, sent A B, end B, wait, send C, sent A B C"},
	{"resuming on an idle session delivers at once (it stayed held)",
		"pause, hold X, idle, wait, wait, sent, resume, sent X"},
	{"resuming delivers one; the next waits for its run",
		"pause, hold X, hold Y, idle, wait, resume, sent X, wait, sent X, run X, end, wait, sent X Y"},
	{"pausing again before the idle settles keeps them",
		"hold X, pause, idle, resume, pause, wait, sent"},
	{"held on an idle session, a message waits for the next idle",
		"idle, wait, hold X, wait, sent, send Y, sent Y, run Y, end, wait, sent Y X"},
	{"held messages go one per run, in order",
		"hold A, hold B, run first, end, sent, wait, sent A, wait, sent A, run A, wait, sent A, end, wait, sent A B"},
	{"a message sent while a run is on waits for its end",
		"run first, send A, sent, wait, sent, end, sent, wait, sent A"},
}

func TestPaceScripts(t *testing.T) {
	for _, tc := range paceScripts {
		t.Run(tc.name, func(t *testing.T) {
			r := newPaceRig(t)
			for _, w := range strings.Split(tc.script, ",") {
				r.step(strings.TrimSpace(w))
			}
		})
	}
}

// The rule alone, without a Deliverer: when it asks for what.
func TestPaceSteps(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	held := func(paused bool) *Queue {
		q := NewQueue()
		if _, err := q.Add("x", IntentHold, false, t0); err != nil {
			t.Fatal(err)
		}
		if err := q.SetPaused(paused); err != nil {
			t.Fatal(err)
		}
		return q
	}
	for _, tc := range []struct {
		name string
		run  func(p *Pace) (Action, time.Time)
		want Action
		at   time.Time // when to look again
	}{
		{"idle, not settled yet: look again at the settle time", func(p *Pace) (Action, time.Time) {
			p.Queue(held(false))
			p.Session(t0, true, events.RunIdle)
			return p.Step(t0.Add(100 * time.Millisecond))
		}, ActNone, t0.Add(DefaultSettle)},
		{"idle and settled: next", func(p *Pace) (Action, time.Time) {
			p.Queue(held(false))
			p.Session(t0, true, events.RunIdle)
			return p.Step(t0.Add(DefaultSettle))
		}, ActNext, time.Time{}},
		{"not live: nothing", func(p *Pace) (Action, time.Time) {
			p.Queue(held(false))
			p.Session(t0, false, events.RunIdle)
			return p.Step(t0.Add(time.Hour))
		}, ActNone, time.Time{}},
		{"paused: nothing", func(p *Pace) (Action, time.Time) {
			p.Queue(held(true))
			p.Session(t0, true, events.RunIdle)
			return p.Step(t0.Add(DefaultSettle))
		}, ActNone, time.Time{}},
		{"resumed by anyone while idle: next", func(p *Pace) (Action, time.Time) {
			p.Queue(held(true))
			p.Session(t0, true, events.RunIdle)
			p.Step(t0.Add(DefaultSettle))
			p.Queue(held(false))
			return p.Step(t0.Add(time.Minute))
		}, ActNext, time.Time{}},
		{"resumed while running: at the idle", func(p *Pace) (Action, time.Time) {
			p.Queue(held(true))
			p.Session(t0, true, events.RunGenerating)
			p.Queue(held(false))
			return p.Step(t0.Add(time.Minute))
		}, ActNone, time.Time{}},
		{"an edit in progress blocks", func(p *Pace) (Action, time.Time) {
			p.Queue(held(false))
			p.Session(t0, true, events.RunIdle)
			p.Block(true)
			return p.Step(t0.Add(DefaultSettle))
		}, ActNone, time.Time{}},
		{"stopped is idle where the server keeps no queue", func(p *Pace) (Action, time.Time) {
			p.Queue(held(false))
			p.Session(t0, true, events.RunStopped)
			return p.Step(t0.Add(DefaultSettle))
		}, ActNext, time.Time{}},
		{"a run a message started that never shows: after TurnWait", func(p *Pace) (Action, time.Time) {
			p.Queue(held(false))
			p.Session(t0, true, events.RunIdle)
			p.Done(t0, ActNone, []Result{{Delivered: true, Message: Message{Text: "y"}}}, nil)
			if a, at := p.Step(t0.Add(DefaultSettle)); a != ActNone || !at.Equal(t0.Add(DefaultTurnWait)) {
				t.Fatalf("during the wait: %v, look again at %v", a, at)
			}
			return p.Step(t0.Add(DefaultTurnWait))
		}, ActNext, time.Time{}},
		{"reconnected with a message the user sent: flush", func(p *Pace) (Action, time.Time) {
			q := NewQueue()
			if _, err := q.Add("x", IntentSend, false, t0); err != nil {
				t.Fatal(err)
			}
			p.Queue(q)
			p.Session(t0, true, events.RunGenerating)
			return p.Step(t0)
		}, ActFlush, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPace(client.Capabilities{})
			a, at := tc.run(p)
			if a != tc.want || !at.Equal(tc.at) {
				t.Fatalf("Step = %v, %v; want %v, %v", a, at, tc.want, tc.at)
			}
		})
	}
}

// The words: what Note says the pending messages wait for, in each state
// of the rule. Each is what the rule will do next, never a stale reason.
func TestPaceNotes(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	queue := func(intent Intent, paused bool) *Queue {
		q := NewQueue()
		if _, err := q.Add("x", intent, false, t0); err != nil {
			t.Fatal(err)
		}
		if err := q.SetPaused(paused); err != nil {
			t.Fatal(err)
		}
		return q
	}
	held, sent := queue(IntentHold, false), queue(IntentSend, false)
	refused := NewQueue()
	m, _ := refused.Add("x", IntentHold, false, t0)
	_ = refused.MarkSending(m.ID, t0)
	_ = refused.MarkFailed(m.ID, OutcomePermanent, "404")
	noQueue, maria := client.Capabilities{}, client.Capabilities{ServerQueue: true}
	for _, tc := range []struct {
		name string
		caps client.Capabilities
		q    *Queue
		run  func(p *Pace)
		want Note
	}{
		{"nothing pending", noQueue, NewQueue(), func(p *Pace) {}, NoteNone},
		{"paused", noQueue, queue(IntentHold, true), func(p *Pace) { p.Session(t0, true, events.RunIdle) }, NotePaused},
		{"sent, the stream never live yet", noQueue, sent, func(p *Pace) { p.Session(t0, false, events.RunIdle) }, NoteLoading},
		{"sent, the stream lost: the daemon does not answer", noQueue, sent, func(p *Pace) {
			p.Session(t0, true, events.RunIdle)
			p.Session(t0, false, events.RunIdle)
		}, NoteServer},
		{"held, the stream lost", noQueue, held, func(p *Pace) { p.Session(t0, false, events.RunIdle) }, NoteIdle},
		{"held while a run runs", noQueue, held, func(p *Pace) { p.Session(t0, true, events.RunGenerating) }, NoteIdle},
		{"sent while a run runs, server queues", maria, sent, func(p *Pace) { p.Session(t0, true, events.RunGenerating) }, NoteRun},
		{"sent while a run runs, no queue: it starts a run then", noQueue, sent, func(p *Pace) {
			p.Session(t0, true, events.RunGenerating)
		}, NoteRunStarts},
		{"idle, not settled yet", noQueue, held, func(p *Pace) { p.Session(t0, true, events.RunIdle) }, NoteSettle},
		{"held on an idle task that settled: the next idle", noQueue, held, func(p *Pace) {
			p.Queue(NewQueue())
			p.Session(t0, true, events.RunIdle)
			p.Step(t0.Add(DefaultSettle)) // spent on nothing due
		}, NoteNextIdle},
		{"a delivery under way", noQueue, held, func(p *Pace) {
			p.Session(t0, true, events.RunIdle)
			p.Step(t0.Add(DefaultSettle))
		}, NoteDelivering},
		{"waiting for the run a message started", noQueue, held, func(p *Pace) {
			p.Session(t0, true, events.RunIdle)
			p.Done(t0, ActNone, []Result{{Delivered: true, Message: Message{Text: "y"}}}, nil)
		}, NoteTurn},
		{"a failed try waits", noQueue, held, func(p *Pace) {
			p.Session(t0, true, events.RunIdle)
			p.Step(t0.Add(DefaultSettle))
			p.Done(t0.Add(DefaultSettle), ActNext, nil, client.Retryable(fmt.Errorf("503")))
		}, NoteRetry},
		{"an edit in progress", noQueue, held, func(p *Pace) {
			p.Session(t0, true, events.RunIdle)
			p.Block(true)
		}, NoteEditing},
		{"a stopped maria task", maria, held, func(p *Pace) { p.Session(t0, true, events.RunStopped) }, NoteStopped},
		{"only refused ones", noQueue, refused, func(p *Pace) { p.Session(t0, true, events.RunIdle) }, NoteRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPace(tc.caps)
			p.Queue(tc.q)
			tc.run(p)
			p.Queue(tc.q)
			if got := p.Note(tc.q); got != tc.want {
				t.Fatalf("Note = %q, want %q", got, tc.want)
			}
		})
	}
}

// A send the user made on a task that looks idle here, answered busy (the
// server's run ended after its stream said so): it goes at the next
// settled idle, and meanwhile it says so; it stuck, "sent, not delivered
// yet", until something else happened.
func TestPaceBusySendOnIdleGoesAfterSettle(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	p := NewPace(client.Capabilities{})
	p.Queue(NewQueue())
	p.Session(t0, true, events.RunIdle)
	if a, _ := p.Step(t0.Add(DefaultSettle)); a != ActNone {
		t.Fatalf("nothing due: %v", a)
	}
	q := NewQueue()
	m, _ := q.Add("C", IntentSend, false, t0)
	_ = q.MarkSending(m.ID, t0)
	_ = q.MarkFailed(m.ID, OutcomeBusy, "")
	p.Queue(q)
	now := t0.Add(time.Minute)
	p.Done(now, ActNone, []Result{{Message: m, Busy: true}}, WaitForIdle(client.ErrBusy))
	if n := p.Note(q); n != NoteSettle {
		t.Fatalf("Note = %q, want %q", n, NoteSettle)
	}
	if a, at := p.Step(now); a != ActNone || !at.Equal(now.Add(DefaultSettle)) {
		t.Fatalf("Step = %v, %v; want none until %v", a, at, now.Add(DefaultSettle))
	}
	if a, _ := p.Step(now.Add(DefaultSettle)); a != ActNext {
		t.Fatalf("after Settle: %v, want ActNext", a)
	}
}
