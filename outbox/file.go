package outbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// journalLockWait bounds the wait for another process's journal lock,
// which is only ever held for one read and one write.
const journalLockWait = 10 * time.Second

// DefaultRoot is perch's state directory: $XDG_STATE_HOME/perch, else
// HOME/.local/state/perch (a relative XDG_STATE_HOME is ignored, as the
// XDG spec says).
func DefaultRoot(getenv func(string) string, home string) string {
	if getenv != nil {
		if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
			return filepath.Join(d, "perch")
		}
	}
	return filepath.Join(home, ".local", "state", "perch")
}

// DaemonKey names a daemon's directory: its URL made file-name safe
// ("127.0.0.1_8090_v1"), plus a short hash of the whole URL so that two URLs
// that sanitize alike never share an outbox.
func DaemonKey(daemonURL string) string {
	s := daemonURL
	if u, err := url.Parse(daemonURL); err == nil && u.Host != "" {
		s = u.Host + u.Path
		if u.Scheme != "" && u.Scheme != "http" {
			s = u.Scheme + "_" + s
		}
	}
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	name := strings.Trim(b.String(), "_.")
	if len(name) > 80 {
		name = name[:80]
	}
	sum := sha256.Sum256([]byte(daemonURL))
	return name + "-" + hex.EncodeToString(sum[:3])
}

// escapeTask makes a task id a file name, reversibly: bytes other than
// letters, digits, '-' and '_' become %XX (a UUID stays as it is).
func escapeTask(task string) string {
	var b strings.Builder
	for _, c := range []byte(task) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func unescapeTask(name string) (string, bool) {
	s, err := url.PathUnescape(name)
	return s, err == nil
}

// FileStore keeps each task's queue in its own journal file: dir/TASK.jsonl,
// with TASK.lock (held around every read and write of the journal) and
// TASK.deliver (the delivery lock) beside it. Locks are flocks, so a perch
// that dies releases them.
type FileStore struct {
	dir string
	// Now is the clock for history pruning; nil means time.Now.
	Now func() time.Time

	mu    sync.Mutex
	cache map[string]*cached // per task: the state at a journal offset
}

// cached lets a read replay only what was appended since the last one.
// It is used only while the journal is the same file, no shorter, and its
// bytes just before the offset are the ones seen then (every writer only
// appends or renames a new file over it).
type cached struct {
	fi   os.FileInfo
	size int64
	tail []byte // the last bytes before size
	q    *Queue
	st   replayStats
}

const cacheTail = 256

// OpenFileStore returns the store of one daemon under root (see
// DefaultRoot): root/outbox/DaemonKey(daemonURL). Nothing is created until
// the first Update.
func OpenFileStore(root, daemonURL string) *FileStore {
	return NewFileStore(filepath.Join(root, "outbox", DaemonKey(daemonURL)))
}

// NewFileStore returns a store in dir.
func NewFileStore(dir string) *FileStore { return &FileStore{dir: dir} }

// Dir is the store's directory.
func (s *FileStore) Dir() string { return s.dir }

// Path is the journal file of a task.
func (s *FileStore) Path(task string) string {
	return filepath.Join(s.dir, escapeTask(task)+".jsonl")
}

func (s *FileStore) side(task, ext string) string {
	return filepath.Join(s.dir, escapeTask(task)+ext)
}

func (s *FileStore) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// acquire waits for the flock on path until ctx ends.
func acquire(ctx context.Context, path string) (func(), error) {
	delay := 5 * time.Millisecond
	for {
		f, ok, err := tryLock(path)
		if err != nil {
			return nil, fmt.Errorf("outbox: lock: %w", err)
		}
		if ok {
			return func() { f.Close(); unlockPath(path) }, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		if delay < 50*time.Millisecond {
			delay *= 2
		}
	}
}

func (s *FileStore) lockJournal(task string) (func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), journalLockWait)
	defer cancel()
	release, err := acquire(ctx, s.side(task, ".lock"))
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("outbox: %s is locked by another perch for more than %v", s.Path(task), journalLockWait)
	}
	return release, err
}

// Load implements Store. A missing journal is an empty queue; damaged lines
// are skipped and counted (Queue.Damaged), never an error.
func (s *FileStore) Load(task string) (*Queue, error) {
	if _, err := os.Stat(s.Path(task)); errors.Is(err, fs.ErrNotExist) {
		return NewQueue(), nil
	}
	// Under the journal lock a half-appended line of a live writer is
	// never mistaken for damage; a read-only directory is read without it.
	if release, err := s.lockJournal(task); err == nil {
		defer release()
	}
	q, _, _, err := s.read(task)
	return q, err
}

// read replays the task's journal (the caller holds its lock), from the
// cache when it can. It returns the queue, the replay's stats and the
// journal's size.
func (s *FileStore) read(task string) (*Queue, replayStats, int64, error) {
	f, err := os.Open(s.Path(task))
	if errors.Is(err, fs.ErrNotExist) {
		s.forget(task)
		return NewQueue(), replayStats{clean: true}, 0, nil
	}
	if err != nil {
		return nil, replayStats{}, 0, fmt.Errorf("outbox: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, replayStats{}, 0, fmt.Errorf("outbox: %w", err)
	}
	size := fi.Size()
	s.mu.Lock()
	c := s.cache[task]
	s.mu.Unlock()
	var q *Queue
	var st replayStats
	from := int64(0)
	if c != nil && os.SameFile(c.fi, fi) && size >= c.size {
		tail := make([]byte, len(c.tail))
		if _, err := f.ReadAt(tail, c.size-int64(len(tail))); err == nil && bytes.Equal(tail, c.tail) {
			q, st, from = c.q.Clone(), c.st, c.size
		}
	}
	if q == nil {
		q, st = NewQueue(), replayStats{clean: true}
	}
	data := make([]byte, size-from)
	if _, err := f.ReadAt(data, from); err != nil && !errors.Is(err, io.EOF) {
		return nil, replayStats{}, 0, fmt.Errorf("outbox: read %s: %w", s.Path(task), err)
	}
	replayInto(q, &st, data)
	nc := &cached{fi: fi, size: size, q: q.Clone(), st: st}
	if c != nil && from > 0 && len(data) < cacheTail {
		nc.tail = slices.Concat(c.tail, data)
	} else {
		nc.tail = data
	}
	if len(nc.tail) > cacheTail {
		nc.tail = nc.tail[len(nc.tail)-cacheTail:]
	}
	nc.tail = bytes.Clone(nc.tail)
	s.mu.Lock()
	if s.cache == nil {
		s.cache = map[string]*cached{}
	}
	s.cache[task] = nc
	s.mu.Unlock()
	return q, st, size, nil
}

func (s *FileStore) forget(task string) {
	s.mu.Lock()
	delete(s.cache, task)
	s.mu.Unlock()
}

// Update implements Store: the change is one appended, fsynced line (or,
// when the journal has grown, or holds damaged lines, a fresh journal
// written to a temporary file, fsynced and renamed over it; the damaged
// original is kept beside it as TASK.jsonl.damaged-TIME).
func (s *FileStore) Update(task string, fn func(*Queue) error) (*Queue, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	release, err := s.lockJournal(task)
	if err != nil {
		return nil, err
	}
	defer release()
	path := s.Path(task)
	q, st, size, err := s.read(task)
	if err != nil {
		return nil, err
	}
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
	// The cache is only good for what was read; the next read sees the
	// write as appended bytes, or a new file.
	if needsCompaction(q, size+int64(len(line)), st) {
		s.forget(task)
		if st.damaged > 0 {
			data, err := os.ReadFile(path)
			if err != nil {
				return q, fmt.Errorf("outbox: %w", err)
			}
			keep := path + ".damaged-" + strconv.FormatInt(s.now().UnixNano(), 10)
			if err := writeAtomic(keep, data); err != nil {
				return q, err
			}
		}
		b, err := snapshotBytes(q, s.now())
		if err != nil {
			return q, err
		}
		return q, writeAtomic(path, b)
	}
	if !st.clean {
		line = append([]byte{'\n'}, line...)
	}
	if err := appendLine(path, line); err != nil {
		s.forget(task)
		return q, err
	}
	return q, nil
}

// appendLine appends and fsyncs; a new file's directory entry is fsynced
// too.
func appendLine(path string, line []byte) error {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("outbox: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("outbox: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		syncDir(filepath.Dir(path))
	}
	return nil
}

// writeAtomic replaces path with data: temporary file, fsync, rename,
// fsync of the directory.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	tmp := f.Name()
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("outbox: write %s: %w", path, err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: not every file system syncs directories
		d.Close()
	}
}

// LockDelivery implements Store with a flock on TASK.deliver.
func (s *FileStore) LockDelivery(ctx context.Context, task string) (func(), error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	release, err := acquire(ctx, s.side(task, ".deliver"))
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("%w (%v)", ErrLocked, ctx.Err())
	}
	return release, err
}

// Tasks lists the tasks that have a journal in this store, sorted.
func (s *FileStore) Tasks() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	var out []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		if task, ok := unescapeTask(name); ok {
			out = append(out, task)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Watch reports changes of a task's journal (any process's) on the
// returned channel, polling every interval (250–500 ms keeps a UI within a
// second of a command-line change). The channel holds at most one pending
// signal and is closed when ctx ends.
func (s *FileStore) Watch(ctx context.Context, task string, every time.Duration) <-chan struct{} {
	ch := make(chan struct{}, 1)
	path := s.Path(task)
	go func() {
		defer close(ch)
		t := time.NewTicker(every)
		defer t.Stop()
		last, _ := os.Stat(path)
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			cur, _ := os.Stat(path)
			if changed(last, cur) {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
			last = cur
		}
	}()
	return ch
}

func changed(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return (a == nil) != (b == nil)
	}
	return !os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime())
}

// Merge moves the pending messages of task from to the end of task into,
// keeping their ids and states, and removes from's journal. It is for a
// task id that was kept as typed while the daemon was unreachable (a
// prefix) once the daemon names the task. Running it again after a crash
// moves nothing twice. It returns how many messages moved.
func (s *FileStore) Merge(from, into string) (int, error) {
	if from == into {
		return 0, nil
	}
	releaseFrom, err := s.lockJournal(from)
	if err != nil {
		return 0, err
	}
	defer releaseFrom()
	data, err := os.ReadFile(s.Path(from))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("outbox: %w", err)
	}
	src, _ := replay(data)
	moved := 0
	_, err = s.Update(into, func(q *Queue) error {
		for _, m := range src.pending {
			if have, ok := q.Get(m.ID); ok {
				if have.Text == m.Text {
					continue // moved by an earlier, interrupted merge
				}
				m.ID = q.NewID()
			}
			m := m
			if err := q.do(Record{Op: OpPut, Msg: &m}); err != nil {
				return err
			}
			moved++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := os.Remove(s.Path(from)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return moved, fmt.Errorf("outbox: %w", err)
	}
	syncDir(s.dir)
	return moved, nil
}
