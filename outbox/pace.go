package outbox

import (
	"errors"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// Defaults of a Pace.
const (
	// DefaultSettle: how long a session must stay idle, its stream live
	// and its history in, before a held message goes (a replay passes
	// through idle many times).
	DefaultSettle = 700 * time.Millisecond
	// DefaultTurnWait: how long to wait for the run a message started to
	// show before the next may go anyway; also how long a failed or busy
	// attempt waits for a run or a reconnect before the next try.
	DefaultTurnWait = 30 * time.Second
)

// Action is what a Pace asks of its caller.
type Action uint8

const (
	// ActNone: nothing now. Step again at the time Step gave, or on news.
	ActNone Action = iota
	// ActNext: call Deliverer.Next(ctx, task, Idle), then Done.
	ActNext
	// ActFlush: call Deliverer.Flush(ctx, task), then Done.
	ActFlush
)

// Pace is the one rule of when a session's messages are delivered: the
// held ones one at a time when the session is idle, each only after the
// run the previous one started was seen, and the ones the user sent as
// soon as the session's stream is back. It is pure (no IO, no clock, no
// goroutine): the caller tells it what it sees (Session, Event, Queue,
// Done), asks Step what to do, does it with a Deliverer, and reports the
// outcome with Done. The terminal UI and Driver are such callers; both
// draw what Pace says (Note).
//
// The rule:
//
//   - A session is idle when its stream is live with its history in and
//     its status is idle (or stopped, where StoppedIsIdle). Each idle
//     that lasted Settle may deliver one held message (Next(Idle)). A
//     message held while the session is already idle waits for the next
//     idle; so does an idle spent with nothing due.
//   - Auto-delivery resumed (by anyone: the store's change shows in
//     Queue) while the session is idle counts as a fresh idle.
//   - A delivered message that was not queued started a run: nothing else
//     goes on idle until that run was seen (the session running, or the
//     message in the transcript followed by an end of run) and the
//     session is idle again for Settle, or TurnWait passed.
//   - After such a message, or a busy answer, the next idle calls
//     Next(Idle) even with nothing due: it is the Deliverer's word that
//     the session is idle, which ends its busy pause, so that a message
//     the user sends later is not kept back by a run long over.
//   - A failed or busy attempt waits for a run, a reconnect or TurnWait.
//   - When the stream comes back (live, history in), the messages the
//     user sent meanwhile go at once (Flush), idle or busy.
//   - Nothing goes on idle while the caller blocks it (an edit in
//     progress) or a delivery it asked for is under way.
type Pace struct {
	// Settle and TurnWait: zero means DefaultSettle and DefaultTurnWait.
	Settle, TurnWait time.Duration
	// StoppedIsIdle: a stopped session takes messages (a run that
	// ended). maria's stopped task has no process and is not restarted
	// behind the user's back.
	StoppedIsIdle bool

	queues               bool // the server queues or pipes a follow-up to a running session
	wasReady             bool // the stream was live once
	ready, idle, running bool
	idleAt               time.Time // when the current idle began
	armed                bool      // the current idle may deliver one message
	wait                 turnWait
	gated                bool // the Deliverer may hold a busy pause only Next(Idle) ends
	blocked              bool
	nexting, flushing    bool
	flushWant            bool // the stream came back: deliver what the user sent

	have                    bool // a queue was seen
	due, sendWaiting, pause bool
}

// turnWait is what must happen before the next message goes on idle.
type turnWait struct {
	on       bool
	text     string    // a message that started a run: wait for that run
	userSeen bool      // its user message is in the transcript
	until    time.Time // go on anyway then
}

// NewPace returns the rule for a session of a backend with caps.
func NewPace(caps client.Capabilities) *Pace {
	return &Pace{StoppedIsIdle: !caps.ServerQueue, queues: caps.ServerQueue || caps.PipesFollowUps}
}

func (p *Pace) settle() time.Duration {
	if p.Settle > 0 {
		return p.Settle
	}
	return DefaultSettle
}

func (p *Pace) turnWait() time.Duration {
	if p.TurnWait > 0 {
		return p.TurnWait
	}
	return DefaultTurnWait
}

// Session tells what the session is now: ready (its stream is live and
// its history in) and its status. Call it after every change (a batch of
// events, a connection state).
func (p *Pace) Session(now time.Time, ready bool, status events.RunStatus) {
	if ready && !p.ready {
		// (Re)connected: what the user sent meanwhile goes, and what
		// failed may work now. A run being waited for shows in the
		// history, or TurnWait ends the wait.
		p.flushWant = true
		if p.wait.on && p.wait.text == "" {
			p.wait = turnWait{}
		}
	}
	p.ready = ready
	p.wasReady = p.wasReady || ready
	p.running = ready && status == events.RunGenerating
	if p.running {
		p.wait = turnWait{} // a run is seen: the next idle is a fresh one
	}
	idle := ready && (status == events.RunIdle || status == events.RunStopped && p.StoppedIsIdle)
	switch {
	case !idle:
		p.idleAt, p.armed = time.Time{}, false
	case !p.idle:
		p.idleAt, p.armed = now, true
	}
	p.idle = idle
}

// Event tells one event of the session, with the session's status after
// it: it finds the run a delivered message started.
func (p *Pace) Event(ev events.Event, status events.RunStatus) {
	if !p.wait.on {
		return
	}
	switch {
	case status == events.RunGenerating:
		p.turnSeen()
	case p.wait.text != "" && ev.Kind == events.KindUserMessage && ev.Text == p.wait.text:
		p.wait.userSeen = true
	case p.wait.userSeen && runEnd(ev):
		p.turnSeen() // its run started and ended between two looks
	}
}

// turnSeen ends the wait for a run: the idle after it is a fresh one.
func (p *Pace) turnSeen() {
	p.wait = turnWait{}
	p.idle = false
}

// runEnd: an event that ends a run.
func runEnd(ev events.Event) bool {
	switch ev.Kind {
	case events.KindPostConversation, events.KindCancelled, events.KindFailed:
		return true
	case events.KindRunState:
		return ev.RunStatus != events.StatusGenerating
	}
	return false
}

// Queue tells the session's outbox as stored now (after a change by this
// process or any other).
func (p *Pace) Queue(q *Queue) {
	due := dueOnIdle(q)
	_, waiting := q.Next(Busy)
	if p.have && p.pause && !q.Paused() && p.idle {
		p.armed = true // resumed on an idle session
	}
	p.have, p.due, p.sendWaiting, p.pause = true, due, waiting, q.Paused()
}

// Block stops (true) or allows delivery on idle: an edit of a held message
// is in progress.
func (p *Pace) Block(on bool) { p.blocked = on }

// Step says what to do now, and when to look again without news (zero:
// only on news). An action it returns is under way until Done.
func (p *Pace) Step(now time.Time) (Action, time.Time) {
	if p.wait.on && !now.Before(p.wait.until) {
		p.wait = turnWait{} // it never showed: go on
		p.armed = p.idle
	}
	if p.flushWant && p.have && p.ready && !p.flushing {
		p.flushWant = false
		if p.sendWaiting {
			p.flushing = true
			return ActFlush, time.Time{}
		}
	}
	switch {
	case p.wait.on:
		return ActNone, p.wait.until
	case !p.idle || !p.armed || p.nexting || p.blocked:
		return ActNone, time.Time{}
	case now.Sub(p.idleAt) < p.settle():
		return ActNone, p.idleAt.Add(p.settle())
	case !p.have:
		return ActNone, time.Time{} // Queue comes
	case p.due || p.gated:
		p.armed, p.nexting = false, true
		return ActNext, time.Time{}
	}
	p.armed = false // an idle spent on nothing due
	return ActNone, time.Time{}
}

// Done reports a delivery: the action Step asked for (ActNone for one the
// caller made by itself, like the user's send or "send now"), its results
// and its error.
func (p *Pace) Done(now time.Time, a Action, rs []Result, err error) {
	switch a {
	case ActNext:
		p.nexting, p.gated = false, false
	case ActFlush:
		p.flushing = false
	}
	busy := errors.Is(err, ErrBusy)
	for _, r := range rs {
		busy = busy || r.Busy
		if r.Delivered && !r.Message.Queued && !r.Message.Recovered {
			// It starts a run: the next waits for that run.
			p.wait = turnWait{on: true, text: r.Message.Text, until: now.Add(p.turnWait())}
			p.gated = true
		}
	}
	if busy {
		p.gated = true
		if a != ActNext && p.idle && !p.wait.on {
			// The user's send, or a flush, found the session busy while it
			// looks idle here (the server's run ended later than its
			// stream says, or the Deliverer still paused for a run now
			// over): a fresh idle, so that Next(Idle) goes after Settle.
			p.armed, p.idleAt = true, now
		}
	}
	if a == ActNext && err != nil && !p.wait.on {
		// Failed, or busy: wait for a run, a reconnect or TurnWait.
		p.wait = turnWait{on: true, until: now.Add(p.turnWait())}
	}
}

// Waiting reports whether the next message waits for a run to be seen.
func (p *Pace) Waiting() bool { return p.wait.on }

// Note is what the pending messages of q wait for, as a UI says it. Every
// word a UI shows about when a message goes comes from here, so that it
// matches what the rule will do.
type Note uint8

const (
	NoteNone       Note = iota // nothing pending
	NotePaused                 // auto-delivery is paused
	NoteIdle                   // held messages go one at a time when the session is idle
	NoteRun                    // a run is running on a server that queues: they go when it ends
	NoteServer                 // the server does not answer: they go when it does
	NoteRunStarts              // a run is running on a server without a queue: the next starts when it ends
	NoteLoading                // the session's stream is not live yet (never was)
	NoteDelivering             // a delivery is under way
	NoteTurn                   // a delivered message started a run that has not shown yet
	NoteRetry                  // the last try failed or found the session busy
	NoteEditing                // a held message is being edited
	NoteSettle                 // the session is idle: one goes once it has been idle for Settle
	NoteNextIdle               // held while idle: it waits for the session's next run to end
	NoteStopped                // the session is stopped and is not restarted behind the user's back
	NoteRefused                // only refused messages are left: the user decides
	NoteOrphaned               // only orphans are left: their session is gone
)

func (n Note) String() string {
	switch n {
	case NotePaused:
		return "auto-delivery paused"
	case NoteIdle:
		return "sent one at a time when the task is idle"
	case NoteRun:
		return "sent when the run ends"
	case NoteServer:
		return "delivered when the daemon answers"
	case NoteRunStarts:
		return "starts when the running run ends"
	case NoteLoading:
		return "delivered once the session is loaded"
	case NoteDelivering:
		return "being delivered"
	case NoteTurn:
		return "the next goes once the run of the last one has shown"
	case NoteRetry:
		return "tried again after a run, a reconnect or in a while"
	case NoteEditing:
		return "waiting while a held message is being edited"
	case NoteSettle:
		return "sent once the task has been idle for a moment"
	case NoteNextIdle:
		return "sent after the task's next run (held while it was idle)"
	case NoteStopped:
		return "the task is stopped: they wait until one is sent now"
	case NoteRefused:
		return "refused: edit, send or delete it"
	case NoteOrphaned:
		return "its session is gone: move it to another session or take it back"
	}
	return ""
}

// Note says what q's pending messages wait for, from what the rule knows
// now: the words a UI prints about them (see Note's values).
//
//   - paused wins: held messages wait for a resume;
//   - no live stream: the ones the user sent wait for the server to answer
//     (or, before the stream was ever live, for the session to load);
//   - a run running: held messages go one at a time on idle; the ones the
//     user sent go when it ends (on a server without a queue the next one
//     starts a run then);
//   - otherwise exactly what the rule waits for: a delivery under way, the
//     run of the last delivered message, a retry, an edit, the settle
//     time, the next idle (a message held while the session was idle), or
//     the user (a stopped maria task, refused messages).
func (p *Pace) Note(q *Queue) Note {
	if q == nil || q.Len() == 0 {
		return NoteNone
	}
	if q.Paused() {
		return NotePaused
	}
	held, send, refused, orphans := false, false, true, false
	for _, m := range q.pending {
		switch {
		case m.State == Orphaned:
			orphans = true
			continue
		case m.State == Failed:
			continue
		case m.Intent == IntentSend || m.Waiting || m.State == Sending:
			send = true
		default:
			held = true
		}
		refused = false
	}
	switch {
	case refused && orphans:
		return NoteOrphaned
	case refused:
		return NoteRefused
	case !p.ready && held && !send:
		return NoteIdle
	case !p.ready && !p.wasReady:
		return NoteLoading
	case !p.ready:
		return NoteServer
	case p.nexting || p.flushing:
		return NoteDelivering
	case p.running && held:
		return NoteIdle
	case p.running && p.queues:
		return NoteRun
	case p.running:
		return NoteRunStarts
	case p.wait.on && p.wait.text != "":
		return NoteTurn
	case p.wait.on:
		return NoteRetry
	case !p.idle:
		return NoteStopped
	case p.blocked:
		return NoteEditing
	case p.armed:
		return NoteSettle
	case held && !send:
		return NoteNextIdle
	}
	return NoteIdle
}
