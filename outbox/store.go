package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Store keeps one Queue per task durably. Implementations make every
// Update atomic (all of fn's records or none survive a crash) and
// serialize Updates across goroutines and, for FileStore, processes.
type Store interface {
	// Load returns the task's queue as stored (empty if there is none). It
	// never fails on damaged data: what can't be read is skipped and
	// counted in Queue.Damaged.
	Load(task string) (*Queue, error)
	// Update runs fn on the freshest queue, under the task's lock, and
	// stores the records fn's method calls produced. If fn fails, nothing
	// is stored. It returns the queue after fn.
	Update(task string, fn func(*Queue) error) (*Queue, error)
	// LockDelivery takes the task's delivery lock, waiting until ctx ends.
	// Whoever holds it is the only one posting this task's messages; a
	// message found Sending while holding it is no longer in flight.
	LockDelivery(ctx context.Context, task string) (unlock func(), err error)
}

// ErrLocked: another perch is delivering this task's messages right now.
var ErrLocked = errors.New("another perch is delivering this task's messages")

// Compaction policy: the journal is rewritten from the state when it holds
// many more records, or bytes, than the state needs.
const (
	compactMinRecords = 64
	compactMinBytes   = 64 << 10
	historyKeep       = 24 * time.Hour // sent messages remembered for the exactly-once check
	historyMin        = 32             // …and at least this many, whatever their age
)

// encodeLine is the journal line of one Update: its record, or a batch of
// its records, so that one line is one atomic change.
func encodeLine(recs []Record) ([]byte, error) {
	r := recs[0]
	if len(recs) > 1 {
		r = Record{Op: OpBatch, Ops: recs}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil { // Encode ends the line with \n
		return nil, fmt.Errorf("outbox: encode record: %w", err)
	}
	return b.Bytes(), nil
}

// replayStats describes a replayed journal.
type replayStats struct {
	records int  // lines that applied
	damaged int  // lines that are not a record (corrupt, half-written)
	clean   bool // the data is empty or ends with a newline
}

// replay rebuilds a queue from journal bytes, line by line: a line that is
// not a record is skipped (Damaged), a record that does not apply is
// skipped (Rejected). It never fails.
func replay(data []byte) (*Queue, replayStats) {
	q := NewQueue()
	st := replayStats{clean: true}
	replayInto(q, &st, data)
	return q, st
}

// replayInto applies more journal bytes to q: the continuation of the
// journal that st describes.
func replayInto(q *Queue, st *replayStats, data []byte) {
	if len(data) > 0 {
		st.clean = data[len(data)-1] == '\n'
	}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil || r.Op == "" {
			st.damaged++
			continue
		}
		if err := q.Apply(r); err != nil {
			q.Rejected++
			continue
		}
		st.records++
	}
	q.Damaged = st.damaged
}

// needsCompaction decides whether a journal of size bytes and n records is
// worth rewriting as the snapshot of q.
func needsCompaction(q *Queue, size int64, st replayStats) bool {
	if st.damaged > 0 || q.Rejected > 0 {
		return true
	}
	live := int64(0)
	for _, m := range q.pending {
		live += int64(len(m.Text)) + 256
	}
	for _, m := range q.sent {
		live += int64(len(m.Text)) + 256
	}
	n := len(q.pending) + len(q.sent) + 1
	return st.records > compactMinRecords+2*n || size > compactMinBytes+2*live
}

// MemStore is a Store in memory, with the same journal encoding as
// FileStore: for tests, and for a UI that runs without a state directory.
type MemStore struct {
	mu       sync.Mutex
	journals map[string][]byte
	delivery map[string]chan struct{}
	watchers map[string]map[chan struct{}]bool
	// Now is the clock for history pruning; nil means time.Now.
	Now func() time.Time
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{journals: map[string][]byte{}, delivery: map[string]chan struct{}{}}
}

// Journal returns a copy of a task's journal bytes.
func (s *MemStore) Journal(task string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.journals[task])
}

// SetJournal replaces a task's journal bytes (to test damaged data).
func (s *MemStore) SetJournal(task string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.journals[task] = bytes.Clone(b)
}

// Tasks lists the tasks that have a journal, sorted (as FileStore.Tasks).
func (s *MemStore) Tasks() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.journals))
	for t, j := range s.journals {
		if len(j) > 0 {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Load implements Store.
func (s *MemStore) Load(task string) (*Queue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, _ := replay(s.journals[task])
	return q, nil
}

// Update implements Store.
func (s *MemStore) Update(task string, fn func(*Queue) error) (*Queue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data := s.journals[task]
	q, st := replay(data)
	if err := fn(q); err != nil {
		q.TakeRecords()
		return q, err
	}
	recs := q.TakeRecords()
	if len(recs) == 0 {
		return q, nil
	}
	line, err := encodeLine(recs)
	if err != nil {
		return q, err
	}
	s.signal(task)
	if needsCompaction(q, int64(len(data)+len(line)), st) {
		now := time.Now
		if s.Now != nil {
			now = s.Now
		}
		b, err := snapshotBytes(q, now())
		if err != nil {
			return q, err
		}
		s.journals[task] = b
		return q, nil
	}
	if !st.clean {
		data = append(data, '\n')
	}
	s.journals[task] = append(data, line...)
	return q, nil
}

// Watch implements Watcher: a signal after each change of the task's
// queue (every is not needed: nothing is polled).
func (s *MemStore) Watch(ctx context.Context, task string, _ time.Duration) <-chan struct{} {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if s.watchers == nil {
		s.watchers = map[string]map[chan struct{}]bool{}
	}
	if s.watchers[task] == nil {
		s.watchers[task] = map[chan struct{}]bool{}
	}
	s.watchers[task][ch] = true
	s.mu.Unlock()
	context.AfterFunc(ctx, func() {
		s.mu.Lock()
		delete(s.watchers[task], ch)
		s.mu.Unlock()
		close(ch)
	})
	return ch
}

// signal tells the task's watchers of a change; s.mu is held.
func (s *MemStore) signal(task string) {
	for ch := range s.watchers[task] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// LockDelivery implements Store.
func (s *MemStore) LockDelivery(ctx context.Context, task string) (func(), error) {
	s.mu.Lock()
	ch := s.delivery[task]
	if ch == nil {
		ch = make(chan struct{}, 1)
		s.delivery[task] = ch
	}
	s.mu.Unlock()
	select {
	case ch <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-ch }) }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w (%v)", ErrLocked, ctx.Err())
	}
}

// snapshotBytes prunes q's history and returns the compacted journal of q:
// one put per message.
func snapshotBytes(q *Queue, now time.Time) ([]byte, error) {
	q.pruneHistory(now, historyKeep, historyMin)
	var b bytes.Buffer
	for _, r := range q.Snapshot() {
		line, err := encodeLine([]Record{r})
		if err != nil {
			return nil, err
		}
		b.Write(line)
	}
	return b.Bytes(), nil
}
