package tui

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
)

// Outbox is where the UI keeps the messages on their way to a task (see
// docs/outbox.md): every message the user sends or holds is written to
// Store before anything is posted, and Backend delivers it.
type Outbox struct {
	Store outbox.Store
	// Backend delivers messages: the session interface of the system the
	// UI shows (maria, Suna, pynchy). Nil sends through the UI's Backend
	// (and, unable to ask whether a message arrived, treats every failed
	// send as not arrived).
	Backend backend.Backend
}

// pather is a store that keeps its queues in files (FileStore).
type pather interface {
	Path(task string) string
}

// watchEvery is the polling interval of a watched outbox: a change made
// from the command line shows within a second.
const watchEvery = 300 * time.Millisecond

// deliverTimeout bounds one delivery command: a send, and before it maybe
// the check of a message whose outcome was unknown (a replay of the task).
const deliverTimeout = 2 * time.Minute

// outboxes is the UI's side of the outbox: the store, its deliverer and
// the snapshot order. It is shared with the commands, which do all of its
// IO; Update only reads the snapshots they return.
type outboxes struct {
	store outbox.Store
	d     *outbox.Deliverer

	mu  sync.Mutex
	seq uint64 // snapshot order: a higher seq is never an older state

	// touched lists the tasks the session opened (Update only; read by Run
	// after the program ended).
	touched map[string]bool
}

func newOutboxes(cfg *Outbox, b Backend) *outboxes {
	o := &outboxes{touched: map[string]bool{}}
	var be backend.Backend
	if cfg != nil && cfg.Store != nil {
		o.store = cfg.Store
		be = cfg.Backend
	} else {
		o.store = outbox.NewMemStore()
	}
	if be == nil {
		be = sendOnly{b}
	}
	o.d = &outbox.Deliverer{Store: o.store, Backend: be}
	return o
}

// load reads a task's queue; the seq it returns orders snapshots.
func (o *outboxes) load(task string) (*outbox.Queue, uint64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	q, err := o.store.Load(task)
	o.seq++
	return q, o.seq, err
}

// update changes a task's queue and returns the queue after the change.
func (o *outboxes) update(task string, fn func(*outbox.Queue) error) (*outbox.Queue, uint64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	q, err := o.store.Update(task, fn)
	o.seq++
	if err != nil {
		// Update returns the queue fn failed on: reload the stored one.
		if sq, lerr := o.store.Load(task); lerr == nil {
			q = sq
		} else {
			q = nil
		}
	}
	return q, o.seq, err
}

// path is where a task's messages are kept, "" for an outbox in memory.
func (o *outboxes) path(task string) string {
	if p, ok := o.store.(pather); ok {
		return p.Path(task)
	}
	return ""
}

// watch returns the store's change signals for a task, or nil when the
// store cannot tell. A file is watched with inotify where there is one (an
// idle perch must not wake up), else the store polls it every watchEvery.
func (o *outboxes) watch(ctx context.Context, task string) <-chan struct{} {
	w, ok := o.store.(outbox.Watcher)
	if !ok {
		return nil
	}
	if p, ok := o.store.(pather); ok {
		if ch, ok := watchFile(ctx, p.Path(task)); ok {
			return ch
		}
	}
	return w.Watch(ctx, task, watchEvery)
}

// tasks is the touched tasks, sorted.
func (o *outboxes) tasks() []string {
	out := make([]string, 0, len(o.touched))
	for id := range o.touched {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// pace is the delivery rule for a task of this outbox's backend.
func (o *outboxes) pace() *outbox.Pace { return outbox.NewPace(o.d.Backend.Capabilities()) }

// sendOnly delivers through the UI's Backend: a backend.Backend that can
// only send. It cannot tell whether a message whose send failed arrived,
// so it says none did (outbox.Receiver): the outbox then sends it again (a
// message whose answer was lost may arrive twice; a real backend has no
// such gap). It says it queues follow-ups, as maria does: the UI's own
// backend gives no other word, and the outbox then starts no run of its
// own accord.
type sendOnly struct{ b Backend }

var (
	_ backend.Backend = sendOnly{}
	_ outbox.Receiver = sendOnly{}
)

func (sendOnly) Name() string { return "" }
func (sendOnly) URL() string  { return "" }
func (sendOnly) Capabilities() backend.Capabilities {
	return backend.Capabilities{Send: true, ServerQueue: true}
}

func (s sendOnly) Send(ctx context.Context, task string, m backend.Message) (backend.SendResult, error) {
	res, err := s.b.Send(ctx, task, m.Text, m.WebSearch)
	if err != nil {
		var ae *maria.APIError
		if errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500 &&
			ae.Status != http.StatusRequestTimeout && ae.Status != http.StatusTooManyRequests {
			return backend.SendResult{}, outbox.Permanent(err)
		}
		return backend.SendResult{}, outbox.Retryable(err)
	}
	return backend.SendResult{ID: res.ID, Queued: res.Queued}, nil
}

func (sendOnly) Received(context.Context, string, string, time.Time) (int, error) { return 0, nil }

// The rest of a session's interface is the UI's own business.

func (sendOnly) Sessions(context.Context) ([]events.Task, error) { return nil, backend.ErrUnsupported }
func (sendOnly) Session(context.Context, string) (events.Task, error) {
	return events.Task{}, backend.ErrUnsupported
}
func (sendOnly) Follow(context.Context, string, func(backend.Update)) error {
	return backend.ErrUnsupported
}
func (sendOnly) Cancel(context.Context, string) ([]events.QueuedMessage, error) {
	return nil, backend.ErrUnsupported
}
func (sendOnly) Create(context.Context, backend.CreateRequest) (events.Task, error) {
	return events.Task{}, backend.ErrUnsupported
}
