package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/index"
)

// indexKeeper keeps the index current while the terminal UI runs (and
// perch index --watch), so that what the agents did today is found
// without running perch index again: when a run of a session ends, the
// local CLIs' session files are read from where the index stopped (only
// their new bytes), and a session of a live source is read again as its
// source has it. Under the UI it keeps an index that exists (perch index
// made it) and never creates one: a first index of a long history is
// perch index's work, with its progress bar.
//
// It hears of run ends from the board (board.Options.OnChange, with the
// board locked) or, for the UI on one server, from that server's lists
// (lists); both only note the session. The reading happens on the
// keeper's own goroutine, one session after another, never in the UI's
// Update.
type indexKeeper struct {
	env    Env // quiet: nothing is printed but through say
	ix     *index.Index
	opened *openedBackends
	local  map[string]bool   // board source names whose sessions are local files
	urls   map[string]string // board source name → URL, for a live session's key
	say    func(string)      // what was read, for perch index --watch; nil under the UI
	// firstSight: a session is read when the board first lists it too
	// (perch index --watch), not only when a run of it ends.
	firstSight bool

	mu     sync.Mutex
	due    map[keptSession]bool // runs ended, not read yet
	listed map[string]bool      // sources first listed, not read whole yet (firstSight)
	wake   chan struct{}        // cap 1: work is due
	done   chan struct{}        // closed when run returns
}

type keptSession struct{ source, id string }

// startIndexKeeper keeps the index of env current for the board's sources
// until ctx ends, when one exists; nil when there is none. Call wait
// after ctx ended.
func startIndexKeeper(ctx context.Context, env Env, sources []board.Source, opened *openedBackends) *indexKeeper {
	if _, err := os.Stat(indexPath(env)); err != nil {
		return nil
	}
	k := newIndexKeeper(env, nil, sources, opened, nil) // run opens it, off the UI's start
	go k.run(ctx)
	return k
}

// newIndexKeeper is a keeper of ix (nil: run opens env's index and
// closes it when it stops) for the board's sources; go run(ctx) starts
// it. say, if not nil, is told what was read.
func newIndexKeeper(env Env, ix *index.Index, sources []board.Source, opened *openedBackends, say func(string)) *indexKeeper {
	env.Stdout, env.Stderr, env.IsTerminal, env.StderrIsTerminal = io.Discard, io.Discard, false, false
	k := &indexKeeper{env: env, ix: ix, opened: opened, local: map[string]bool{}, urls: map[string]string{}, say: say,
		due: map[keptSession]bool{}, listed: map[string]bool{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
	dirs := map[string]bool{}
	for _, d := range localDirs(env) {
		dirs[d] = true
	}
	for _, s := range sources {
		k.urls[s.Name] = s.URL
		k.local[s.Name] = dirs[s.URL] // a local CLI's source is its directory
	}
	return k
}

// change is board.Options.OnChange: a run that ended makes its session
// due, and with firstSight a session the board lists for the first time.
func (k *indexKeeper) change(ch board.Change) {
	running := func(s board.Status) bool { return s == board.Generating || s == board.Waiting }
	ended := running(ch.Old) && !running(ch.New)
	if ended || k.firstSight && ch.Old == "" {
		k.note(keptSession{ch.Source, ch.Session})
	}
}

// lists is Config.OnSessions for the UI of one server, the board's
// source: it tells run ends from one list to the next. It is called from
// one goroutine.
func (k *indexKeeper) lists(source string) func([]events.Task) {
	running := func(status string) bool { return status == events.StatusGenerating || status == events.StatusWaiting }
	was := map[string]bool{} // running in the last list
	return func(ts []events.Task) {
		now := make(map[string]bool, len(ts))
		for _, t := range ts {
			now[t.ID] = running(t.Status)
			if was[t.ID] && !now[t.ID] {
				k.note(keptSession{source, t.ID})
			}
		}
		was = now
	}
}

// note makes s due and wakes the keeper.
func (k *indexKeeper) note(s keptSession) {
	k.mu.Lock()
	k.due[s] = true
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// source is board.Options.OnSource: with firstSight, a source's first
// list makes every session of it due, read after that list, so that a
// run that ended before it is not missed (the board reports no change
// for what its first list holds).
func (k *indexKeeper) source(st board.SourceState) {
	if !k.firstSight || !st.Listed {
		return
	}
	k.mu.Lock()
	if _, done := k.listed[st.Name]; !done {
		k.listed[st.Name] = true
	}
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// wait returns once the keeper stopped (after its context ended).
func (k *indexKeeper) wait() { <-k.done }

func (k *indexKeeper) run(ctx context.Context) {
	defer close(k.done)
	if k.ix == nil {
		ix, err := openIndex(ctx, k.env)
		if err != nil {
			return
		}
		k.ix = ix
		defer ix.Close()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-k.wake:
		}
		k.mu.Lock()
		due := k.due
		k.due = map[keptSession]bool{}
		var whole []string
		for src, pending := range k.listed {
			if pending {
				whole = append(whole, src)
				k.listed[src] = false // read once
			}
		}
		k.mu.Unlock()
		files := false
		for _, src := range whole {
			if k.local[src] {
				files = true
				continue
			}
			if b := k.opened.get(src); b != nil {
				if ts, err := b.Sessions(ctx); err == nil {
					for _, t := range ts {
						due[keptSession{src, t.ID}] = true
					}
				}
			}
		}
		for s := range due {
			if k.local[s.source] {
				files = true // every local file at once, below
				continue
			}
			k.readLive(ctx, s)
		}
		if files {
			k.readFiles(ctx)
		}
	}
}

// readFiles reads what the local CLIs' session files gained since the
// index last read them, and any new file.
func (k *indexKeeper) readFiles(ctx context.Context) {
	known, err := k.ix.Paths(ctx)
	if err != nil {
		return
	}
	srcs := mergeSources(index.LocalFiles(localDirs(k.env)), known)
	var files, messages int
	k.ix.IndexFiles(ctx, srcs, func(_ index.Source, r index.FileResult, err error) {
		if err == nil && r.Read > 0 {
			files, messages = files+1, messages+r.Messages
		}
	}, func(int64) {})
	if k.say != nil && files > 0 {
		k.say(fmt.Sprintf("read %s: %s", nounCount(files, "local session file"), nounCount(messages, "message")))
	}
}

// readLive reads a live session again, as its source has it now.
func (k *indexKeeper) readLive(ctx context.Context, s keptSession) {
	b := k.opened.get(s.source)
	if b == nil {
		return
	}
	t, err := b.Session(ctx, s.id)
	if err != nil {
		if !errors.Is(err, client.ErrNoTask) {
			k.retry(s)
		}
		return
	}
	r, err := indexLiveSession(ctx, k.env, k.ix, k.urls[s.source], b, t)
	switch {
	case err != nil && ctx.Err() == nil:
		k.retry(s)
	case err == nil && k.say != nil:
		k.say(fmt.Sprintf("read %s session %s: %s", b.Name(), shortID(t.ID), nounCount(r.Messages, "message")))
	}
}

// retry makes s due again at the next run end anywhere: a source that
// is down now is read when it is back.
func (k *indexKeeper) retry(s keptSession) {
	k.mu.Lock()
	k.due[s] = true
	k.mu.Unlock()
}
