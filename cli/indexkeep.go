package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/index"
)

// indexKeeper keeps the index current while the board runs, so that what
// the agents did today is found without running perch index again: when
// a run of a session ends, the local CLIs' session files are read from
// where the index stopped (only their new bytes), and a session of a live
// source is read again as its source has it. It keeps an index that exists
// (perch index made it) and never creates one: a first index of a long
// history is perch index's work, with its progress bar.
//
// The board tells it of run ends through board.Options.OnChange, with the
// board locked, so change only notes the session; the reading happens on
// the keeper's own goroutine, one session after another, never in the UI's
// Update.
type indexKeeper struct {
	env    Env // quiet: nothing may be printed under the UI
	ix     *index.Index
	opened *openedBackends
	local  map[string]bool   // board source names whose sessions are local files
	urls   map[string]string // board source name → URL, for a live session's key

	mu   sync.Mutex
	due  map[keptSession]bool // runs ended, not read yet
	wake chan struct{}        // cap 1: work is due
	done chan struct{}        // closed when run returns
}

type keptSession struct{ source, id string }

// startIndexKeeper starts keeping the index of env current for the
// board's sources until ctx ends; nil when there is no index to keep.
// Call wait after ctx ended.
func startIndexKeeper(ctx context.Context, env Env, sources []board.Source, opened *openedBackends) *indexKeeper {
	if _, err := os.Stat(indexPath(env)); err != nil {
		return nil
	}
	ix, err := openIndex(ctx, env)
	if err != nil {
		return nil
	}
	env.Stdout, env.Stderr, env.IsTerminal, env.StderrIsTerminal = io.Discard, io.Discard, false, false
	k := &indexKeeper{env: env, ix: ix, opened: opened, local: map[string]bool{}, urls: map[string]string{},
		due: map[keptSession]bool{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
	dirs := map[string]bool{}
	for _, d := range localDirs(env) {
		dirs[d] = true
	}
	for _, s := range sources {
		k.urls[s.Name] = s.URL
		k.local[s.Name] = dirs[s.URL] // a local CLI's source is its directory
	}
	go k.run(ctx)
	return k
}

// change is board.Options.OnChange: a run that ended makes its session
// due.
func (k *indexKeeper) change(ch board.Change) {
	running := func(s board.Status) bool { return s == board.Generating || s == board.Waiting }
	if !running(ch.Old) || running(ch.New) {
		return
	}
	k.mu.Lock()
	k.due[keptSession{ch.Source, ch.Session}] = true
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// wait returns once the keeper stopped (after its context ended) and
// closed the index.
func (k *indexKeeper) wait() { <-k.done }

func (k *indexKeeper) run(ctx context.Context) {
	defer close(k.done)
	defer k.ix.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case <-k.wake:
		}
		k.mu.Lock()
		due := k.due
		k.due = map[keptSession]bool{}
		k.mu.Unlock()
		files := false
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
	k.ix.IndexFiles(ctx, srcs, func(index.Source, index.FileResult, error) {}, func(int64) {})
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
	if _, err := indexLiveSession(ctx, k.env, k.ix, k.urls[s.source], b, t); err != nil && ctx.Err() == nil {
		k.retry(s)
	}
}

// retry makes s due again at the next run end anywhere: a source that
// is down now is read when it is back.
func (k *indexKeeper) retry(s keptSession) {
	k.mu.Lock()
	k.due[s] = true
	k.mu.Unlock()
}
