package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// A session's token count needs its whole transcript, so listing never
// computes it: WatchSessions counts the transcripts in the background,
// newest first, and counts a grown one on from where it stopped; the
// counts are kept (KeepTotals) so that the next start has them, and a
// listing shows what is counted so far.

// totalsEntry is one transcript's count, as of Size and Mod.
type totalsEntry struct {
	Size int64     `json:"size"`
	Mod  time.Time `json:"mod"`
	Off  int64     `json:"off"` // bytes counted: whole lines
	// Tokens of the replies before the last one; the last one's, LastID,
	// may still grow (the CLI writes a reply as several lines, each with
	// the message's usage so far).
	Tokens int64  `json:"tokens"`
	LastID string `json:"last_id,omitempty"`
	Last   int64  `json:"last,omitempty"`
}

func (e totalsEntry) sum() int64 { return e.Tokens + e.Last }

// totals are the counts by transcript path.
type totals struct {
	mu    sync.Mutex
	path  string // where they are kept ("" for nowhere)
	m     map[string]totalsEntry
	dirty bool
}

// maxTotalsFile bounds the kept counts read back.
const maxTotalsFile = 64 << 20

// KeepTotals keeps the sessions' token counts in the file at path (perch's
// state directory), read back now: a start after the first has them at
// once. A file that cannot be read is started over.
func (l *Local) KeepTotals(path string) {
	l.totals.mu.Lock()
	defer l.totals.mu.Unlock()
	l.totals.path = path
	if l.totals.m == nil {
		l.totals.m = map[string]totalsEntry{}
	}
	data, err := readSmall(path, maxTotalsFile)
	if err != nil {
		return
	}
	var m map[string]totalsEntry
	if json.Unmarshal(data, &m) == nil {
		for p, e := range m {
			if _, ok := l.totals.m[p]; !ok {
				l.totals.m[p] = e
			}
		}
	}
}

// tokens is the count of the transcript at path so far (0 before it was
// counted).
func (t *totals) tokens(path string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[path].sum()
}

// save writes the counts where they are kept, if they changed.
func (t *totals) save() error {
	t.mu.Lock()
	if !t.dirty || t.path == "" {
		t.mu.Unlock()
		return nil
	}
	data, err := json.Marshal(t.m)
	t.dirty = false
	path := t.path
	t.mu.Unlock()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// count brings the transcript's count up to date, reading only what was
// appended since it was last counted (all of it when the file is new,
// shorter, or replaced by an older one); true when the count changed.
func (t *totals) count(path string) (bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.mu.Lock()
		defer t.mu.Unlock()
		if _, ok := t.m[path]; ok {
			delete(t.m, path)
			t.dirty = true
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	t.mu.Lock()
	e, ok := t.m[path]
	t.mu.Unlock()
	if ok && e.Size == fi.Size() && e.Mod.Equal(fi.ModTime()) {
		return false, nil
	}
	if !ok || fi.Size() < e.Off || fi.ModTime().Before(e.Mod) {
		e = totalsEntry{}
	}
	before := e.sum()
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if _, err := f.Seek(e.Off, io.SeekStart); err != nil {
		return false, err
	}
	buf := make([]byte, 0, readChunk)
	chunk := make([]byte, readChunk)
	for e.Off < fi.Size() {
		n, rerr := f.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				break
			}
			e.line(buf[:i])
			e.Off += int64(i + 1)
			buf = buf[i+1:]
		}
		if len(buf) > maxLine {
			return false, fmt.Errorf("%s: a line over %d MB", path, maxLine>>20)
		}
		if rerr == io.EOF || n == 0 {
			break // the rest is a line being written
		}
		if rerr != nil {
			return false, rerr
		}
		buf = append(make([]byte, 0, max(readChunk, len(buf))), buf...)
	}
	e.Size, e.Mod = fi.Size(), fi.ModTime()
	t.mu.Lock()
	if t.m == nil {
		t.m = map[string]totalsEntry{}
	}
	t.m[path] = e
	t.dirty = true
	t.mu.Unlock()
	return e.sum() != before, nil
}

// line counts one transcript line: an assistant line's usage, once per
// reply (its message id).
func (e *totalsEntry) line(line []byte) {
	if !bytes.Contains(line, []byte(`"assistant"`)) || !bytes.Contains(line, []byte(`"usage"`)) {
		return
	}
	var o struct {
		Type    string `json:"type"`
		Message struct {
			ID    string `json:"id"`
			Usage struct {
				Input      int64 `json:"input_tokens"`
				CacheWrite int64 `json:"cache_creation_input_tokens"`
				CacheRead  int64 `json:"cache_read_input_tokens"`
				Output     int64 `json:"output_tokens"`
			} `json:"usage"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &o) != nil || o.Type != "assistant" {
		return
	}
	u := o.Message.Usage
	n := u.Input + u.CacheWrite + u.CacheRead + u.Output
	if o.Message.ID != "" && o.Message.ID == e.LastID {
		e.Last = max(e.Last, n)
		return
	}
	e.Tokens += e.Last
	e.LastID, e.Last = o.Message.ID, n
}

// counter counts transcripts in the background for WatchSessions, one at
// a time: what changed first, then the backlog, newest first. It hands
// the paths whose count changed to the watcher, a batch at a time.
type counter struct {
	t       *totals
	mu      sync.Mutex
	pending []string
	queued  map[string]bool
	wake    chan struct{}
	out     chan []string
}

func newCounter(t *totals) *counter {
	return &counter{t: t, queued: map[string]bool{}, wake: make(chan struct{}, 1), out: make(chan []string, 1)}
}

// add queues paths, first (something changed) or last (the backlog).
func (c *counter) add(first bool, paths ...string) {
	c.mu.Lock()
	var fresh []string
	for _, p := range paths {
		if !c.queued[p] {
			c.queued[p] = true
			fresh = append(fresh, p)
		}
	}
	if first {
		c.pending = append(fresh, c.pending...)
	} else {
		c.pending = append(c.pending, fresh...)
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *counter) next() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return "", false
	}
	p := c.pending[0]
	c.pending = c.pending[1:]
	delete(c.queued, p)
	return p, true
}

// batchEvery is how often counts reach the list while many are counted;
// saveEvery how often they are written down while they change.
const (
	batchEvery = 250 * time.Millisecond
	saveEvery  = 5 * time.Second
)

// run counts until ctx ends, then writes the counts down.
func (c *counter) run(ctx context.Context) {
	defer c.t.save()
	var batch []string
	sent, saved := time.Now(), time.Now()
	for {
		p, ok := c.next()
		if !ok {
			if len(batch) > 0 {
				select {
				case c.out <- batch:
					batch, sent = nil, time.Now()
				case <-ctx.Done():
					return
				}
			}
			if time.Since(saved) > saveEvery || len(batch) == 0 {
				c.t.save()
				saved = time.Now()
			}
			select {
			case <-c.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		if changed, err := c.t.count(p); err == nil && changed {
			batch = append(batch, p)
		}
		if len(batch) > 0 && time.Since(sent) > batchEvery {
			select {
			case c.out <- batch:
				batch, sent = nil, time.Now()
			default: // the watcher is busy: a bigger batch next time
			}
		}
		if time.Since(saved) > saveEvery {
			c.t.save()
			saved = time.Now()
		}
	}
}
