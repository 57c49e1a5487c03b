package board

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/sse"
)

// Source is one server the board watches.
type Source struct {
	Name   string // unique among the sources; shown on every row
	System string // the system named for it, "" when asked of the URL
	URL    string // for people and for Marks' keys; never with a token
	// Open opens its backend (through client/registry: the caller knows
	// how). An error that is *WrongSystemError, or wraps ErrRefused or an
	// HTTP 401/403, is shown as such on the source's row.
	Open func(ctx context.Context) (client.Backend, error)
}

// ErrRefused is wrapped by an Open error that means the server refused
// the token.
var ErrRefused = errors.New("the server refused the token")

// WrongSystemError: the URL answers as another system than the one the
// source names.
type WrongSystemError struct{ Want, Got string }

func (e *WrongSystemError) Error() string {
	return fmt.Sprintf("answers as %s, not %s", e.Got, e.Want)
}

// Options tune Start; the zero value is usable.
type Options struct {
	// Poll is how often a source without a watch of its own (Suna) is
	// asked for its list; 0 means 1 s.
	Poll time.Duration
	// StateDir is perch's state directory: the outbox journals are read
	// from it and the seen marks kept in it. "" for neither.
	StateDir string
	// Refresh is how often the outbox journals and the seen marks are
	// looked at (a stat each); 0 means 1 s.
	Refresh time.Duration
	// OnChange gets every change of a session's state, in order, from
	// one goroutine at a time, with the board locked: it must not call
	// back into the board.
	OnChange func(Change)
	// OnSource gets every change of a source's connection state, and
	// its first list (Listed), the same way.
	OnSource func(SourceState)
	// MaxBackoff bounds the wait before a source is opened again; 0
	// means 30 s.
	MaxBackoff time.Duration
	// SummarizeAll reads the last run of every session the board finds
	// (its tokens, cost and last reply), not only of those that ran
	// since they were seen: for a one-shot listing (perch tasks --all,
	// perch watch --snapshot), whose rows would otherwise be empty there.
	SummarizeAll bool
}

// Board keeps a Model live from every source at once; one source that is
// down or slow never holds up the others.
type Board struct {
	opts    Options
	mu      sync.Mutex
	m       *Model
	seen    *Seen
	updated chan struct{}
	wg      sync.WaitGroup
}

// Start watches sources until ctx ends.
func Start(ctx context.Context, sources []Source, opts Options) *Board {
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Refresh <= 0 {
		opts.Refresh = time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	states := make([]SourceState, len(sources))
	for i, s := range sources {
		states[i] = SourceState{Name: s.Name, System: s.System, URL: s.URL, Conn: Connecting, Since: time.Now()}
	}
	b := &Board{opts: opts, m: NewModel(states), updated: make(chan struct{}, 1)}
	b.m.SummarizeAll = opts.SummarizeAll
	if opts.StateDir != "" {
		b.seen = OpenSeen(SeenFile(opts.StateDir))
		if marks, err := b.seen.Load(); err == nil {
			b.m.SetSeen(marks, time.Now())
		}
		b.wg.Add(1)
		go func() { defer b.wg.Done(); b.watchSeen(ctx) }()
	}
	for _, s := range sources {
		b.wg.Add(1)
		go func() { defer b.wg.Done(); b.run(ctx, s) }()
	}
	return b
}

// Wait returns once every goroutine of the board has ended (after ctx).
func (b *Board) Wait() { b.wg.Wait() }

// Updated signals (coalesced) that the board changed: a view redraws
// from Snapshot.
func (b *Board) Updated() <-chan struct{} { return b.updated }

// Snapshot is the board now: every source's state and the rows f selects.
func (b *Board) Snapshot(f Filter) ([]SourceState, []Row) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m.Sources(), b.m.Rows(f)
}

// NeedsYou counts the sessions that need the user.
func (b *Board) NeedsYou() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m.NeedsYou()
}

// MarkSeen records that the user looked at a session (the TUI opened it):
// its unread count drops, here and, through the marks file, in every
// other perch.
func (b *Board) MarkSeen(src, id string) error {
	b.mu.Lock()
	key, mark, ok := b.m.MarkSeen(src, id)
	b.changed(nil)
	b.mu.Unlock()
	if !ok || b.seen == nil {
		return nil
	}
	_, err := b.seen.Save(Marks{key: mark})
	return err
}

// changed reports changes (b.mu held) and signals Updated.
func (b *Board) changed(cs []Change) {
	if b.opts.OnChange != nil {
		for _, c := range cs {
			b.opts.OnChange(c)
		}
	}
	select {
	case b.updated <- struct{}{}:
	default:
	}
}

func (b *Board) setConn(st SourceState) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, old := range b.m.Sources() {
		if old.Name == st.Name && old.Conn == st.Conn && old.Err == st.Err && old.RetryIn == st.RetryIn && old.System == st.System {
			return
		}
	}
	b.m.SetConn(st)
	if b.opts.OnSource != nil {
		for _, s := range b.m.Sources() {
			if s.Name == st.Name {
				b.opts.OnSource(s)
			}
		}
	}
	b.changed(nil)
}

// listed reports whether a list of src's sessions has arrived (b.mu held).
func (b *Board) listed(src string) bool {
	for _, s := range b.m.Sources() {
		if s.Name == src {
			return s.Listed
		}
	}
	return false
}

// setSessions takes a source's list; the runs it shows ended are
// summarized through sum (nil when the source cannot say).
func (b *Board) setSessions(src string, ts []events.Task, sum *summarizer) {
	list := make([]Session, len(ts))
	for i, t := range ts {
		list[i] = FromTask(t)
	}
	b.mu.Lock()
	first := !b.listed(src)
	b.changed(b.m.SetSessions(src, list, time.Now()))
	if first && b.opts.OnSource != nil {
		for _, s := range b.m.Sources() {
			if s.Name == src {
				b.opts.OnSource(s) // now Listed
			}
		}
	}
	base := b.m.TakeBaseline()
	ended := b.m.TakeEnded(src)
	b.mu.Unlock()
	if base != nil && b.seen != nil {
		_, _ = b.seen.Save(base) // a mark not saved is taken again next run
	}
	for _, id := range ended {
		sum.start(id)
	}
}

// Bounds of the summary reads (client.RunSummarizer) of one source.
const (
	maxSummaries   = 4                // at once
	summaryTimeout = 15 * time.Second // each
)

// summarizer reads how each run a source's list shows ended: one bounded
// read per run end (client.RunSummarizer), never per list, at most
// maxSummaries at a time; a read that fails becomes the row's note and
// holds up nothing else.
type summarizer struct {
	b   *Board
	ctx context.Context
	src string
	rs  client.RunSummarizer
	sem chan struct{}
}

func (b *Board) newSummarizer(ctx context.Context, src string, be client.Backend) *summarizer {
	rs, ok := be.(client.RunSummarizer)
	if !ok {
		return nil
	}
	b.mu.Lock()
	b.m.SetSummarized(src)
	b.mu.Unlock()
	return &summarizer{b: b, ctx: ctx, src: src, rs: rs, sem: make(chan struct{}, maxSummaries)}
}

// start reads the summary of id's last run in the background.
func (s *summarizer) start(id string) {
	b := s.b
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		select {
		case s.sem <- struct{}{}:
		case <-s.ctx.Done():
			return
		}
		ctx, cancel := context.WithTimeout(s.ctx, summaryTimeout)
		rs, err := s.rs.RunSummary(ctx, id)
		cancel()
		<-s.sem
		if s.ctx.Err() != nil {
			return
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if err != nil {
			b.changed(b.m.SummaryFailed(s.src, id, err, time.Now()))
			return
		}
		b.changed(b.m.SetSummary(s.src, id, rs, time.Now()))
	}()
}

// run keeps one source watched: open, watch its list, and on failure say
// why on its row and try again after a growing pause.
func (b *Board) run(ctx context.Context, src Source) {
	wait := time.Second
	for {
		b.setConn(SourceState{Name: src.Name, Conn: Connecting, Since: time.Now()})
		be, err := src.Open(ctx)
		if err == nil {
			b.setConn(SourceState{Name: src.Name, System: be.Name(), Conn: Connecting, Since: time.Now()})
			hctx, stop := context.WithCancel(ctx)
			held := make(chan struct{})
			go func() { defer close(held); b.watchHeld(hctx, src.Name, be.URL()) }()
			sum := b.newSummarizer(ctx, src.Name, be)
			err = client.WatchSessions(ctx, be, b.opts.Poll,
				func(ts []events.Task) {
					wait = time.Second // it answered: the next failure starts over
					b.setSessions(src.Name, ts, sum)
				},
				func(cs client.ConnState) { b.setConn(fromConn(src.Name, cs)) })
			stop()
			<-held
		}
		if ctx.Err() != nil {
			return
		}
		st := classify(src.Name, err)
		st.RetryIn, st.Since = wait, time.Now()
		b.setConn(st)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, b.opts.MaxBackoff)
	}
}

// fromConn is a source's state from its watch's connection state.
func fromConn(name string, cs client.ConnState) SourceState {
	st := SourceState{Name: name, Since: cs.Since}
	switch cs.Phase {
	case sse.PhaseLive:
		st.Conn = Live
	case sse.PhaseReconnecting:
		st = classify(name, cs.Err)
		st.Since = cs.Since
		if st.Conn == Down {
			st.Conn = Retrying
		}
		st.RetryIn = cs.RetryIn
	case sse.PhaseFailed:
		st = classify(name, cs.Err)
		st.Since = cs.Since
	default:
		st.Conn = Connecting
	}
	return st
}

// classify is a source's state after err.
func classify(name string, err error) SourceState {
	st := SourceState{Name: name, Conn: Down}
	if err == nil {
		err = errors.New("the watch ended")
	}
	var ws *WrongSystemError
	switch {
	case errors.As(err, &ws):
		st.Conn = WrongSystem
		st.Err = err.Error()
	case refused(err):
		st.Conn = Refused
		st.Err = client.Reason(err)
	default:
		// What a person acts on ("connection refused"), not the URL
		// they configured, which the row names already.
		st.Err = client.Reason(err)
	}
	return st
}

// refused: the server said the token is missing or wrong.
func refused(err error) bool {
	if errors.Is(err, ErrRefused) {
		return true
	}
	auth := func(code int) bool { return code == http.StatusUnauthorized || code == http.StatusForbidden }
	var he *client.HTTPError
	if errors.As(err, &he) && auth(he.Status) {
		return true
	}
	var se *sse.StatusError
	return errors.As(err, &se) && auth(se.Status)
}

// watchHeld reads the source's outbox journals (what perch holds for its
// sessions) every Refresh, reading a journal again only when it changed.
func (b *Board) watchHeld(ctx context.Context, src, url string) {
	if b.opts.StateDir == "" {
		return
	}
	store := outbox.OpenFileStore(b.opts.StateDir, url)
	stats := map[string]os.FileInfo{}
	held := map[string]Held{}
	t := time.NewTicker(b.opts.Refresh)
	defer t.Stop()
	for {
		tasks, _ := store.Tasks()
		dirty := len(tasks) != len(stats)
		next := make(map[string]os.FileInfo, len(tasks))
		for _, task := range tasks {
			fi, _ := os.Stat(store.Path(task))
			next[task] = fi
			if old, ok := stats[task]; ok && fi != nil && old != nil && os.SameFile(old, fi) &&
				old.Size() == fi.Size() && old.ModTime().Equal(fi.ModTime()) {
				continue
			}
			dirty = true
			q, err := store.Load(task)
			if err != nil {
				continue
			}
			held[task] = heldOf(q)
		}
		for task := range held {
			if _, ok := next[task]; !ok {
				delete(held, task)
			}
		}
		stats = next
		if dirty {
			cp := make(map[string]Held, len(held))
			for k, v := range held {
				cp[k] = v
			}
			b.mu.Lock()
			b.changed(b.m.SetHeld(src, cp, time.Now()))
			b.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// heldOf is what a queue holds, as the board counts it.
func heldOf(q *outbox.Queue) Held {
	h := Held{Paused: q.Paused()}
	for _, m := range q.Pending() {
		switch m.State {
		case outbox.Failed, outbox.Orphaned:
			h.Undeliverable++
			if m.Err != "" {
				h.Err = m.Err
			}
		default:
			h.Held++
		}
	}
	return h
}

// watchSeen reads the marks file again when another perch wrote it.
func (b *Board) watchSeen(ctx context.Context) {
	t := time.NewTicker(b.opts.Refresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !b.seen.Changed() {
			continue
		}
		marks, err := b.seen.Load()
		if err != nil {
			continue
		}
		b.mu.Lock()
		b.changed(b.m.SetSeen(marks, time.Now()))
		b.mu.Unlock()
	}
}
