package tui

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/outbox"
)

// Outbox is where the UI keeps the messages on their way to a task (see
// docs/outbox.md): every message the user sends or holds is written to
// Store before anything is posted; the UI's backend delivers it.
type Outbox struct {
	Store outbox.Store
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

func newOutboxes(cfg *Outbox, b client.Backend) *outboxes {
	o := &outboxes{touched: map[string]bool{}}
	if cfg != nil && cfg.Store != nil {
		o.store = cfg.Store
	} else {
		o.store = outbox.NewMemStore()
	}
	o.d = &outbox.Deliverer{Store: o.store, Backend: b}
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
// store cannot tell. A file is watched with fsnotify where the platform has notifications (an
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
