// Package tally keeps the totals of local CLI session files that need a
// whole file to compute (a session's tokens by model, so its cost): a
// file is counted in the background, from where it was last counted when
// it grew, and the counts are kept in a file in perch's state directory so
// that the next start has them without reading the histories again.
// Each system says how one of its lines counts (a Line func).
package tally

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

	"github.com/perch-tui/perch/internal/pricing"
)

// Entry is one file's count, as of Size and Mod.
type Entry struct {
	Size int64     `json:"size"`
	Mod  time.Time `json:"mod"`
	Off  int64     `json:"off"` // bytes counted: whole lines
	// Done are the requests counted, the last one excepted: it may still
	// grow (a CLI writes a reply as several lines, each with its usage so
	// far), so it is LastKey's, of LastModel, apart.
	Done      pricing.Split  `json:"done"`
	LastKey   string         `json:"last_key,omitempty"`
	LastModel string         `json:"last_model,omitempty"`
	Last      pricing.Tokens `json:"last"`
	// Model is the model of the requests that follow, for a file that
	// names it apart from them (Codex's turn_context).
	Model string `json:"model,omitempty"`
}

// Request counts one line's request: a line of the last request's key
// (another copy of it, grown) replaces it, any other starts a new one.
// Counts below zero (a file's nonsense) count as none.
func (e *Entry) Request(key, model string, t pricing.Tokens) {
	t = pricing.Tokens{Input: max(t.Input, 0), Output: max(t.Output, 0), CacheRead: max(t.CacheRead, 0),
		Cache5m: max(t.Cache5m, 0), Cache1h: max(t.Cache1h, 0)}
	if key != "" && key == e.LastKey {
		e.Last = pricing.Tokens{Input: max(e.Last.Input, t.Input), Output: max(e.Last.Output, t.Output),
			CacheRead: max(e.Last.CacheRead, t.CacheRead), Cache5m: max(e.Last.Cache5m, t.Cache5m), Cache1h: max(e.Last.Cache1h, t.Cache1h)}
		return
	}
	if e.LastKey != "" || e.Last.Total() > 0 {
		e.Done.Add(e.LastModel, e.Last)
	}
	e.LastKey, e.LastModel, e.Last = key, model, t
}

// Split is every request counted, by model.
func (e Entry) Split() pricing.Split {
	var s pricing.Split
	s.Merge(e.Done)
	if e.LastKey != "" || e.Last.Total() > 0 {
		s.Add(e.LastModel, e.Last)
	}
	return s
}

// Tokens is every token counted.
func (e Entry) Tokens() int64 { return e.Done.Total() + e.Last.Total() }

// Line counts one line of a file (without its newline) into e.
type Line func(e *Entry, line []byte)

// Tally is the counts of one directory's files, by path.
type Tally struct {
	line Line

	mu     sync.Mutex
	path   string // where they are kept ("" for nowhere)
	m      map[string]Entry
	dirty  bool
	reads  int // files read from their start (a test's counter)
	prices pricing.Prices
	// costs are the counts' costs at prices, computed once per count: a
	// listing asks for every session's, each time.
	costs map[string]priced
}

type priced struct {
	cost float64
	ok   bool
}

// New is an empty tally whose lines count as line says, priced at the
// embedded table.
func New(line Line) *Tally {
	return &Tally{line: line, m: map[string]Entry{}, prices: pricing.DefaultPrices(), costs: map[string]priced{}}
}

// UsePrices prices the counts at p (the embedded table with the config
// file's [prices]).
func (t *Tally) UsePrices(p pricing.Prices) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.prices = p
	clear(t.costs)
}

// Usage is the file's tokens and cost as counted so far: found false
// before it was counted, hasCost false when a model's price is unknown
// (or nothing was counted).
func (t *Tally) Usage(path string) (tokens int64, cost float64, hasCost, found bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[path]
	if !ok {
		return 0, 0, false, false
	}
	c, ok := t.costs[path]
	if !ok {
		c.cost, c.ok = t.prices.SplitCost(e.Split())
		t.costs[path] = c
	}
	return e.Tokens(), c.cost, c.ok, true
}

// kept is the file the counts are kept in; a file of another version
// is started over.
type kept struct {
	V     int              `json:"v"`
	Files map[string]Entry `json:"files"`
}

const keptVersion = 2

// maxKept bounds the kept counts read back.
const maxKept = 64 << 20

// Keep keeps the counts in the file at path, read back now: a start after
// the first has them at once. A file that cannot be read is started over.
func (t *Tally) Keep(path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.path = path
	data, err := readSmall(path, maxKept)
	if err != nil {
		return
	}
	var k kept
	if json.Unmarshal(data, &k) != nil || k.V != keptVersion {
		return
	}
	for p, e := range k.Files {
		if _, ok := t.m[p]; !ok {
			t.m[p] = e
		}
	}
}

// Get is the count of the file at path so far (false before it was
// counted).
func (t *Tally) Get(path string) (Entry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[path]
	return e, ok
}

// Reads is how many times a file was read from its start.
func (t *Tally) Reads() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reads
}

// Save writes the counts where they are kept, if they changed.
func (t *Tally) Save() error {
	t.mu.Lock()
	if !t.dirty || t.path == "" {
		t.mu.Unlock()
		return nil
	}
	data, err := json.Marshal(kept{V: keptVersion, Files: t.m})
	t.dirty = false
	path := t.path
	t.mu.Unlock()
	if err != nil {
		return fmt.Errorf("tally: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("tally: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("tally: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("tally: %w", err)
	}
	return nil
}

const (
	readChunk = 256 << 10
	maxLine   = 32 << 20 // a longer line fails the count
)

// Count brings the file's count up to date, reading only what was
// appended since it was last counted (all of it when the file is new,
// shorter, or replaced by an older one); true when the count changed.
func (t *Tally) Count(path string) (bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.mu.Lock()
		defer t.mu.Unlock()
		if _, ok := t.m[path]; ok {
			delete(t.m, path)
			delete(t.costs, path)
			t.dirty = true
		}
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("tally: %w", err)
	}
	t.mu.Lock()
	e, ok := t.m[path]
	t.mu.Unlock()
	if ok && e.Size == fi.Size() && e.Mod.Equal(fi.ModTime()) {
		return false, nil
	}
	if !ok || fi.Size() < e.Off || fi.ModTime().Before(e.Mod) {
		e = Entry{}
	}
	before := e.Tokens()
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("tally: %w", err)
	}
	defer f.Close()
	if e.Off == 0 {
		t.mu.Lock()
		t.reads++
		t.mu.Unlock()
	}
	if _, err := f.Seek(e.Off, io.SeekStart); err != nil {
		return false, fmt.Errorf("tally: %w", err)
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
			t.line(&e, buf[:i])
			e.Off += int64(i + 1)
			buf = buf[i+1:]
		}
		if len(buf) > maxLine {
			return false, fmt.Errorf("tally: %s: a line over %d MB", path, maxLine>>20)
		}
		if rerr == io.EOF || n == 0 {
			break // the rest is a line being written
		}
		if rerr != nil {
			return false, fmt.Errorf("tally: %w", rerr)
		}
		buf = append(make([]byte, 0, max(readChunk, len(buf))), buf...)
	}
	e.Size, e.Mod = fi.Size(), fi.ModTime()
	t.mu.Lock()
	t.m[path] = e
	delete(t.costs, path)
	t.dirty = true
	t.mu.Unlock()
	return e.Tokens() != before, nil
}

// readSmall reads a file that should be small, refusing a large one.
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return data, nil
}

// Counter counts files in the background, one at a time: what changed
// first, then the backlog, newest first. It hands the paths whose count
// changed to its reader (Out), a batch at a time.
type Counter struct {
	t       *Tally
	mu      sync.Mutex
	pending []string
	queued  map[string]bool
	wake    chan struct{}
	out     chan []string
}

// NewCounter is a counter of t's files.
func NewCounter(t *Tally) *Counter {
	return &Counter{t: t, queued: map[string]bool{}, wake: make(chan struct{}, 1), out: make(chan []string, 1)}
}

// Out gives the paths whose count changed, a batch at a time.
func (c *Counter) Out() <-chan []string { return c.out }

// Add queues paths, first (something changed) or last (the backlog).
func (c *Counter) Add(first bool, paths ...string) {
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

func (c *Counter) next() (string, bool) {
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

// batchEvery is how often counts reach the reader while many are
// counted; saveEvery how often they are written down while they change.
const (
	batchEvery = 250 * time.Millisecond
	saveEvery  = 5 * time.Second
)

// Run counts until ctx ends, then writes the counts down.
func (c *Counter) Run(ctx context.Context) {
	defer c.t.Save()
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
				c.t.Save()
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
		if changed, err := c.t.Count(p); err == nil && changed {
			batch = append(batch, p)
		}
		if len(batch) > 0 && time.Since(sent) > batchEvery {
			select {
			case c.out <- batch:
				batch, sent = nil, time.Now()
			default: // the reader is busy: a bigger batch next time
			}
		}
		if time.Since(saved) > saveEvery {
			c.t.Save()
			saved = time.Now()
		}
	}
}
