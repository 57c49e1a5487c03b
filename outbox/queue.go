// Package outbox is perch's own queue of messages on their way to an agent:
// held messages the user can still edit, reorder and delete, and every
// message perch was asked to deliver, written down before it is posted so
// that none is lost and none is delivered twice.
//
// It has three layers, none of which knows Bubble Tea:
//
//   - Queue, a pure state machine: every change is a Record, and applying
//     the same records to an empty Queue gives the same state again.
//   - Store, which keeps a Queue per task durably (FileStore: an
//     append-only JSON-lines journal per daemon and task under
//     $XDG_STATE_HOME/perch/outbox, with cross-process locks).
//   - Deliverer, which takes one message at a time from a Store to a
//     Backend, exactly once, recovering from a crash between the write and
//     the POST by asking the backend what it already has.
//
// The queue belongs to perch, not to any agent system: a backend only has
// to send a message and say whether a text already reached a task. See
// docs/outbox.md for the file format and the exactly-once argument.
package outbox

import (
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"
)

// State is where a message is on its way.
type State string

const (
	// Held: waiting in perch's queue. Err may tell why an earlier try
	// failed.
	Held State = "held"
	// Sending: written down before the POST, outcome not known yet. Found
	// at load (perch died, or the answer never came), the Deliverer asks
	// the backend whether the text arrived before it sends it again.
	Sending State = "sending"
	// Sent: the backend accepted it (DaemonID when it gave one). Sent
	// messages leave the visible queue; a bounded history stays in the
	// journal for the exactly-once check.
	Sent State = "sent"
	// Failed: the backend refused it for good (task deleted, bad request).
	// It stays listed with Err until the user edits, releases or drops it;
	// it is never delivered automatically.
	Failed State = "failed"
	// Orphaned: the session it was written for is gone (no session with
	// its id, or the id now names a session created at another time). It
	// is never delivered to the task id again by itself: the user moves it
	// to a session (MoveTo), takes it back, or deletes it.
	Orphaned State = "orphan"
)

// Intent is what the user asked for.
type Intent string

const (
	// IntentHold: keep it; deliver it when the task is idle (unless
	// auto-delivery is paused) or when the user releases it.
	IntentHold Intent = "hold"
	// IntentSend: deliver it now; if that cannot be done (daemon down),
	// deliver it as soon as the backend answers again, idle or not.
	IntentSend Intent = "send"
)

// Message is one message in the outbox.
type Message struct {
	ID        string `json:"id"` // local id, short and stable
	Text      string `json:"text"`
	State     State  `json:"state"`
	Intent    Intent `json:"intent"`
	WebSearch bool   `json:"web_search,omitempty"` // for backends that can search the web
	// Session is the session it was written for (SessionStamp); "" for a
	// message written without one, which goes to whatever session has the
	// task's id.
	Session   string `json:"session,omitempty"`
	Err       string `json:"error,omitempty"`     // why the last try failed
	DaemonID  string `json:"daemon_id,omitempty"` // the backend's id once accepted
	Queued    bool   `json:"queued,omitempty"`    // the backend queued it behind a running turn
	Recovered bool   `json:"recovered,omitempty"` // marked sent because the backend already had it
	// Waiting: the last try found the session running on a server that
	// keeps no queue of its own (OutcomeBusy). Not an error: the message
	// is held until the session is idle again. Cleared when it is next
	// handed to the backend.
	Waiting   bool      `json:"waiting,omitempty"`
	Created   time.Time `json:"created,omitzero"`
	SendingAt time.Time `json:"sending_at,omitzero"` // the last time it was handed to the backend
	SentAt    time.Time `json:"sent_at,omitzero"`
}

// Op names a Record's operation.
type Op string

const (
	OpAdd     Op = "add"     // ID, Text, Intent, WebSearch, Session, At; Index: insert there (nil: at the end)
	OpEdit    Op = "edit"    // ID, Text
	OpMove    Op = "move"    // ID, Index (0-based among the pending messages)
	OpDrop    Op = "drop"    // ID
	OpRelease Op = "release" // ID: deliver now (intent send, a failed message is held again)
	OpSending Op = "sending" // ID, At
	OpSent    Op = "sent"    // ID, DaemonID, Queued, Recovered, At
	OpFailed  Op = "failed"  // ID, Outcome, Err (none with OutcomeBusy)
	OpRequeue Op = "requeue" // ID: a sending message the backend does not have goes back to held
	OpOrphan  Op = "orphan"  // ID, Err: its session is gone (held, sending or failed)
	OpPause   Op = "pause"   // auto-delivery of held messages is paused
	OpResume  Op = "resume"
	OpPut     Op = "put"   // Msg: a whole message, appended (compaction)
	OpBatch   Op = "batch" // Ops, applied all or nothing
)

// Outcome classifies a failed delivery.
type Outcome string

const (
	// OutcomeRetry: the message certainly did not arrive and a later try
	// may work (daemon down, 503). It is held again with the reason.
	OutcomeRetry Outcome = "retry"
	// OutcomePermanent: it did not arrive and will not (task deleted).
	OutcomePermanent Outcome = "permanent"
	// OutcomeUnknown: it may have arrived (a timeout after the request
	// went out, a 500). It stays Sending, with the reason, until the
	// backend is asked.
	OutcomeUnknown Outcome = "unknown"
	// OutcomeBusy: it did not arrive because the session is running and
	// its server keeps no queue (Suna). Not a failure: it is held again,
	// Waiting and without an error, and goes when the session is idle.
	OutcomeBusy Outcome = "busy"
)

// Record is one change to a Queue: one line of the journal.
type Record struct {
	Op        Op        `json:"op"`
	ID        string    `json:"id,omitempty"`
	Text      string    `json:"text,omitempty"`
	Intent    Intent    `json:"intent,omitempty"`
	WebSearch bool      `json:"web_search,omitempty"`
	Session   string    `json:"session,omitempty"`
	Index     *int      `json:"index,omitempty"`
	At        time.Time `json:"at,omitzero"`
	DaemonID  string    `json:"daemon_id,omitempty"`
	Queued    bool      `json:"queued,omitempty"`
	Recovered bool      `json:"recovered,omitempty"`
	Outcome   Outcome   `json:"outcome,omitempty"`
	Err       string    `json:"error,omitempty"`
	Msg       *Message  `json:"msg,omitempty"`
	Ops       []Record  `json:"ops,omitempty"`
}

// Errors of the state machine. Test with errors.Is.
var (
	ErrNoMessage   = errors.New("no such held message")
	ErrAmbiguousID = errors.New("ambiguous message id")
	ErrState       = errors.New("not possible in this state")
	ErrEmptyText   = errors.New("the message is empty")
	ErrInvalidText = errors.New("the message is not valid UTF-8")
	ErrBadRecord   = errors.New("malformed record")
)

// Queue is the outbox of one task: the pending messages in order (held,
// sending, failed) and a history of sent ones. It is a pure value: no IO,
// no clock, no randomness of its own (NewID aside). Change it only through
// its methods or Apply; a Store journals what they did.
type Queue struct {
	pending []Message
	sent    []Message // in the order they were sent
	paused  bool

	out      []Record // records applied through methods, not yet taken by a store
	Damaged  int      // journal lines skipped at load (corrupt or half-written)
	Rejected int      // journal records that did not apply at load
}

// NewQueue returns an empty queue.
func NewQueue() *Queue { return &Queue{} }

// Clone returns an independent copy.
func (q *Queue) Clone() *Queue {
	c := *q
	c.pending = slices.Clone(q.pending)
	c.sent = slices.Clone(q.sent)
	c.out = slices.Clone(q.out)
	return &c
}

// Pending returns the messages not delivered yet, in queue order: what the
// UI lists as held (each with its State and Err).
func (q *Queue) Pending() []Message { return slices.Clone(q.pending) }

// History returns the sent messages perch still remembers, oldest first.
func (q *Queue) History() []Message { return slices.Clone(q.sent) }

// Paused reports whether auto-delivery of held messages is paused.
func (q *Queue) Paused() bool { return q.paused }

// Len is the number of pending messages.
func (q *Queue) Len() int { return len(q.pending) }

// Get finds a message, pending or sent, by its exact id.
func (q *Queue) Get(id string) (Message, bool) {
	if i := q.index(id); i >= 0 {
		return q.pending[i], true
	}
	for _, m := range q.sent {
		if m.ID == id {
			return m, true
		}
	}
	return Message{}, false
}

func (q *Queue) index(id string) int {
	for i := range q.pending {
		if q.pending[i].ID == id {
			return i
		}
	}
	return -1
}

// TakeRecords returns the records applied through q's methods since the
// last call, and forgets them. Stores call it.
func (q *Queue) TakeRecords() []Record {
	out := q.out
	q.out = nil
	return out
}

// do applies a record made by a method and remembers it for the store.
func (q *Queue) do(r Record) error {
	if err := q.Apply(r); err != nil {
		return err
	}
	q.out = append(q.out, r)
	return nil
}

func checkText(text string) error {
	if text == "" {
		return ErrEmptyText
	}
	if !utf8.ValidString(text) {
		return ErrInvalidText
	}
	return nil
}

func intp(i int) *int { return &i }

// Add appends a message (IntentHold: held, IntentSend: to be delivered
// now) under a new id and returns it.
func (q *Queue) Add(text string, intent Intent, webSearch bool, now time.Time) (Message, error) {
	return q.AddFor("", text, intent, webSearch, now)
}

// AddFor is Add for the session stamped session (SessionStamp): the
// message is delivered to that session only; if it is gone, the message
// becomes an orphan. An empty stamp is Add.
func (q *Queue) AddFor(session, text string, intent Intent, webSearch bool, now time.Time) (Message, error) {
	id := q.NewID()
	if err := q.do(Record{Op: OpAdd, ID: id, Text: text, Intent: intent, WebSearch: webSearch, Session: session, At: now}); err != nil {
		return Message{}, err
	}
	m, _ := q.Get(id)
	return m, nil
}

// Edit replaces the text of a held or failed message.
func (q *Queue) Edit(id, text string) error { return q.do(Record{Op: OpEdit, ID: id, Text: text}) }

// Move puts a pending message at position pos (0-based, clamped).
func (q *Queue) Move(id string, pos int) error {
	if pos < 0 {
		pos = 0
	}
	if pos >= len(q.pending) {
		pos = len(q.pending) - 1
	}
	return q.do(Record{Op: OpMove, ID: id, Index: intp(pos)})
}

// Drop deletes a held or failed message. A sending message can only be
// dropped with force (the Deliverer does it under the delivery lock, when
// no POST is in flight): it may already have reached the agent.
func (q *Queue) Drop(id string, force bool) error {
	if i := q.index(id); i >= 0 && q.pending[i].State == Sending && !force {
		return fmt.Errorf("message %s is being delivered: %w", id, ErrState)
	}
	return q.do(Record{Op: OpDrop, ID: id})
}

// Release asks for a held or failed message to be delivered now, idle or
// not, paused or not.
func (q *Queue) Release(id string) error { return q.do(Record{Op: OpRelease, ID: id}) }

// MarkSending records that a held message is about to be handed to the
// backend.
func (q *Queue) MarkSending(id string, now time.Time) error {
	return q.do(Record{Op: OpSending, ID: id, At: now})
}

// MarkSent records the backend's acceptance of a sending message.
// recovered says it was found on the backend rather than acknowledged.
func (q *Queue) MarkSent(id, daemonID string, queued, recovered bool, now time.Time) error {
	return q.do(Record{Op: OpSent, ID: id, DaemonID: daemonID, Queued: queued, Recovered: recovered, At: now})
}

// MarkFailed records a failed delivery of a sending message (see Outcome).
func (q *Queue) MarkFailed(id string, outcome Outcome, reason string) error {
	return q.do(Record{Op: OpFailed, ID: id, Outcome: outcome, Err: reason})
}

// Orphan records that a message's session is gone (reason says how).
func (q *Queue) Orphan(id, reason string) error {
	return q.do(Record{Op: OpOrphan, ID: id, Err: reason})
}

// Orphans returns the pending messages whose session is gone.
func (q *Queue) Orphans() []Message {
	var out []Message
	for _, m := range q.pending {
		if m.State == Orphaned {
			out = append(out, m)
		}
	}
	return out
}

// Requeue puts a sending message the backend does not have back to held.
func (q *Queue) Requeue(id string) error { return q.do(Record{Op: OpRequeue, ID: id}) }

// SetPaused pauses or resumes auto-delivery of held messages.
func (q *Queue) SetPaused(paused bool) error {
	if paused == q.paused {
		return nil
	}
	op := OpResume
	if paused {
		op = OpPause
	}
	return q.do(Record{Op: op})
}

// RecoverFromCancel puts the texts a cancel handed back at the front of the
// queue, in order, as held messages, and pauses auto-delivery: the user
// stopped the agent, so nothing is sent behind their back. It returns the
// new messages. It is one record: all of them or none.
func (q *Queue) RecoverFromCancel(texts []string, now time.Time) ([]Message, error) {
	return q.RecoverFromCancelFor("", texts, now)
}

// RecoverFromCancelFor is RecoverFromCancel for the session stamped
// session (see AddFor).
func (q *Queue) RecoverFromCancelFor(session string, texts []string, now time.Time) ([]Message, error) {
	var ops []Record
	seen := map[string]bool{}
	for i, t := range texts {
		id := q.NewID()
		for seen[id] {
			id = q.NewID()
		}
		seen[id] = true
		ops = append(ops, Record{Op: OpAdd, ID: id, Text: t, Intent: IntentHold, Session: session, Index: intp(i), At: now})
	}
	if len(ops) == 0 {
		return nil, nil
	}
	if !q.paused {
		ops = append(ops, Record{Op: OpPause})
	}
	if err := q.do(Record{Op: OpBatch, Ops: ops}); err != nil {
		return nil, err
	}
	return slices.Clone(q.pending[:len(texts)]), nil
}

// Mode says which messages are due.
type Mode int

const (
	// Busy: the task is working (or its state is unknown). Only messages
	// the user sent (IntentSend) are due; the backend queues them.
	Busy Mode = iota
	// Idle: the task is idle. Held messages are due too, unless
	// auto-delivery is paused.
	Idle
)

// Next returns the first message that is due in mode, in queue order. A
// message in state Sending blocks the queue (the Deliverer must resolve
// it first, so nothing overtakes it); failed ones are skipped.
func (q *Queue) Next(mode Mode) (Message, bool) {
	for _, m := range q.pending {
		switch m.State {
		case Sending:
			return Message{}, false
		case Held:
			if m.Intent == IntentSend || (mode == Idle && !q.paused) {
				return m, true
			}
		}
	}
	return Message{}, false
}

// FirstHeld returns the first message that Release can take (held or
// failed).
func (q *Queue) FirstHeld() (Message, bool) {
	for _, m := range q.pending {
		if m.State == Held || m.State == Failed {
			return m, true
		}
	}
	return Message{}, false
}

// Apply applies one record. It is the only place the state changes, so
// replaying a journal reproduces the state exactly. A record that does not
// fit the state is refused with an error and changes nothing.
func (q *Queue) Apply(r Record) error {
	if r.Op == OpBatch {
		if len(r.Ops) == 0 {
			return fmt.Errorf("%w: empty batch", ErrBadRecord)
		}
		c := q.Clone()
		for _, sub := range r.Ops {
			if sub.Op == OpBatch {
				return fmt.Errorf("%w: nested batch", ErrBadRecord)
			}
			if err := c.Apply(sub); err != nil {
				return err
			}
		}
		q.pending, q.sent, q.paused = c.pending, c.sent, c.paused
		return nil
	}
	switch r.Op {
	case OpPause:
		q.paused = true
		return nil
	case OpResume:
		q.paused = false
		return nil
	case OpPut:
		return q.put(r.Msg)
	case OpAdd:
		return q.add(r)
	}
	i := q.index(r.ID)
	if i < 0 {
		return fmt.Errorf("%q: %w", r.ID, ErrNoMessage)
	}
	m := &q.pending[i]
	bad := func() error { return fmt.Errorf("%s %s: message is %s: %w", r.Op, r.ID, m.State, ErrState) }
	switch r.Op {
	case OpEdit:
		if m.State != Held && m.State != Failed && m.State != Orphaned {
			return bad()
		}
		if err := checkText(r.Text); err != nil {
			return err
		}
		m.Text = r.Text
	case OpMove:
		if r.Index == nil {
			return fmt.Errorf("%w: move without index", ErrBadRecord)
		}
		to := *r.Index
		if to < 0 || to >= len(q.pending) {
			return fmt.Errorf("%w: position %d of %d", ErrBadRecord, to+1, len(q.pending))
		}
		msg := *m
		q.pending = slices.Delete(q.pending, i, i+1)
		q.pending = slices.Insert(q.pending, to, msg)
	case OpDrop:
		q.pending = slices.Delete(q.pending, i, i+1)
	case OpRelease:
		if m.State != Held && m.State != Failed {
			return bad()
		}
		m.State, m.Intent, m.Err = Held, IntentSend, ""
	case OpSending:
		if m.State != Held {
			return bad()
		}
		m.State, m.SendingAt, m.Waiting = Sending, r.At, false
	case OpSent:
		if m.State != Sending {
			return bad()
		}
		m.State, m.DaemonID, m.Queued, m.Recovered, m.SentAt, m.Err = Sent, r.DaemonID, r.Queued, r.Recovered, r.At, ""
		q.sent = append(q.sent, *m)
		q.pending = slices.Delete(q.pending, i, i+1)
	case OpFailed:
		if m.State != Sending {
			return bad()
		}
		m.Err = r.Err
		switch r.Outcome {
		case OutcomeRetry:
			m.State = Held
		case OutcomePermanent:
			m.State = Failed
		case OutcomeUnknown:
		case OutcomeBusy:
			m.State, m.Err, m.Waiting = Held, "", true
		default:
			return fmt.Errorf("%w: outcome %q", ErrBadRecord, r.Outcome)
		}
	case OpRequeue:
		if m.State != Sending {
			return bad()
		}
		m.State = Held
	case OpOrphan:
		if m.State != Held && m.State != Sending && m.State != Failed {
			return bad()
		}
		m.State, m.Err, m.Waiting = Orphaned, r.Err, false
	default:
		return fmt.Errorf("%w: op %q", ErrBadRecord, r.Op)
	}
	return nil
}

func (q *Queue) add(r Record) error {
	if !validID(r.ID) {
		return fmt.Errorf("%w: id %q", ErrBadRecord, r.ID)
	}
	if _, dup := q.Get(r.ID); dup {
		return fmt.Errorf("%w: id %s exists", ErrBadRecord, r.ID)
	}
	if err := checkText(r.Text); err != nil {
		return err
	}
	if r.Intent != IntentHold && r.Intent != IntentSend {
		return fmt.Errorf("%w: intent %q", ErrBadRecord, r.Intent)
	}
	at := len(q.pending)
	if r.Index != nil {
		if *r.Index < 0 || *r.Index > len(q.pending) {
			return fmt.Errorf("%w: position %d of %d", ErrBadRecord, *r.Index+1, len(q.pending)+1)
		}
		at = *r.Index
	}
	m := Message{ID: r.ID, Text: r.Text, State: Held, Intent: r.Intent, WebSearch: r.WebSearch, Session: r.Session, Created: r.At}
	q.pending = slices.Insert(q.pending, at, m)
	return nil
}

func (q *Queue) put(m *Message) error {
	if m == nil || !validID(m.ID) {
		return fmt.Errorf("%w: put without a message", ErrBadRecord)
	}
	if _, dup := q.Get(m.ID); dup {
		return fmt.Errorf("%w: id %s exists", ErrBadRecord, m.ID)
	}
	if err := checkText(m.Text); err != nil {
		return err
	}
	switch m.State {
	case Sent:
		q.sent = append(q.sent, *m)
	case Held, Sending, Failed, Orphaned:
		q.pending = append(q.pending, *m)
	default:
		return fmt.Errorf("%w: state %q", ErrBadRecord, m.State)
	}
	return nil
}

// Snapshot is the queue as records that rebuild it (compaction): one put
// per message, pending ones first, then the pause flag.
func (q *Queue) Snapshot() []Record {
	var out []Record
	for _, m := range q.pending {
		m := m
		out = append(out, Record{Op: OpPut, Msg: &m})
	}
	for _, m := range q.sent {
		m := m
		out = append(out, Record{Op: OpPut, Msg: &m})
	}
	if q.paused {
		out = append(out, Record{Op: OpPause})
	}
	return out
}

// pruneHistory forgets sent messages older than keep, but keeps the last
// min of them whatever their age.
func (q *Queue) pruneHistory(now time.Time, keep time.Duration, min int) {
	cut := 0
	for cut < len(q.sent)-min && now.Sub(q.sent[cut].SentAt) > keep {
		cut++
	}
	q.sent = slices.Delete(q.sent, 0, cut)
}
