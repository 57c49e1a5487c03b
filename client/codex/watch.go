package codex

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/tally"
)

// WatchSessions sends the list, then the list again each time it changes:
// a rollout written (only that file is read again, its tail), a rollout or
// a day's directory added, a writer lock taken or let go (locks are looked
// at every second: releasing one makes no file event). The totals by
// model (a session's cost) are counted in the background, one file at a
// time, the newest first, then each rollout as it grows (totals.go), and
// come as another list.
func (l *Local) WatchSessions(ctx context.Context, on func([]events.Task)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	locks := filepath.Join(l.dir, "thread-writer-locks")
	watchDir := func(dir string) {
		_ = w.Add(dir) // a directory that is not there yet is watched once made
	}
	watchTree := func(root string) {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				watchDir(p)
			}
			return nil
		})
	}
	watchDir(l.dir)
	watchTree(l.sessionsDir())
	watchDir(locks)

	ts, err := l.Sessions(ctx)
	if err != nil {
		return err
	}
	on(ts)
	last := ts
	held := l.heldSet()

	cnt := tally.NewCounter(l.totals)
	cctx, stopCounting := context.WithCancel(ctx)
	counting := make(chan struct{})
	go func() {
		defer close(counting)
		cnt.Run(cctx)
	}()
	defer func() { stopCounting(); <-counting }()
	cnt.Add(false, l.uncounted()...)

	dirty := map[string]bool{}
	rescan := false
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	armed := false
	arm := func() {
		if !armed {
			armed = true
			timer.Reset(settle)
		}
	}
	tick := time.NewTicker(lockPoll)
	defer tick.Stop()
	emit := func(ts []events.Task) {
		if !events.EqualTasks(ts, last) {
			last = ts
			on(ts)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("the file watch ended")
			}
			switch {
			case filepath.Dir(ev.Name) == l.dir && filepath.Base(ev.Name) == "session_index.jsonl":
				// A thread named: the list's names are read again.
			case filepath.Dir(ev.Name) == l.dir && filepath.Base(ev.Name) != "sessions" &&
				filepath.Base(ev.Name) != "thread-writer-locks":
				continue // Codex's databases, logs and packages: nothing the list shows
			case ev.Has(fsnotify.Create) && isDir(ev.Name):
				watchTree(ev.Name) // a new day (or the sessions or locks directory)
				rescan = true
			case filepath.Dir(ev.Name) == locks:
				rescan = true // a thread taken: its lock file made
			case strings.HasPrefix(filepath.Base(ev.Name), "rollout-"):
				dirty[ev.Name] = true
			}
			arm()
		case <-w.Errors:
			rescan = true // events may have been lost
			arm()
		case <-timer.C:
			armed = false
			var ts []events.Task
			rescanned := rescan
			if rescan {
				rescan = false
				clear(dirty)
				if ts, err = l.Sessions(ctx); err != nil {
					continue // the next event or tick tries again
				}
			} else {
				sc := newScanner()
				for p := range dirty {
					if _, err := l.refresh(sc, p); err != nil {
						l.forget(p)
					}
					cnt.Add(true, p)
				}
				clear(dirty)
				ts = l.cached()
			}
			held = l.heldSet()
			emit(ts)
			if rescanned { // new rollouts, counted after what changed
				cnt.Add(false, l.uncounted()...)
			}
		case <-tick.C:
			if now := l.heldSet(); !sameSet(now, held) || l.askingDaemon(last) {
				// A lock taken or let go; or a turn runs and Codex's
				// daemon can say whether it waits for the user, which
				// no file shows.
				held = now
				emit(l.cached())
			}
		case <-cnt.Out():
			emit(l.cached())
		}
	}
}

// uncounted is the rollouts listed whose count is missing or older than
// the file, the most recently written first.
func (l *Local) uncounted() []string {
	l.mu.Lock()
	rs := make([]*rollout, 0, len(l.files))
	for _, r := range l.files {
		rs = append(rs, r)
	}
	l.mu.Unlock()
	rs = slices.DeleteFunc(rs, func(r *rollout) bool {
		e, ok := l.totals.Get(r.path)
		return ok && e.Size == r.size && e.Mod.Equal(r.mod)
	})
	slices.SortFunc(rs, func(a, b *rollout) int { return b.mod.Compare(a.mod) })
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.path
	}
	return out
}

func (l *Local) forget(path string) {
	l.mu.Lock()
	delete(l.files, path)
	l.mu.Unlock()
}

// cached is the list from what was read last.
func (l *Local) cached() []events.Task {
	l.mu.Lock()
	rs := make([]*rollout, 0, len(l.files))
	for _, r := range l.files {
		rs = append(rs, r)
	}
	l.mu.Unlock()
	return l.tasks(rs)
}

// heldSet is the threads whose writer lock is held now.
func (l *Local) heldSet() map[string]bool {
	dir := filepath.Join(l.dir, "thread-writer-locks")
	entries, _ := os.ReadDir(dir)
	var paths []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".lock") && !strings.HasPrefix(e.Name(), ".") {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	return heldLocks(paths)
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// askingDaemon says whether the list has a running turn Codex's daemon
// can say more of (a control socket is there).
func (l *Local) askingDaemon(ts []events.Task) bool {
	for _, t := range ts {
		if t.Status == events.StatusGenerating {
			_, err := os.Stat(l.daemonSock())
			return err == nil
		}
	}
	return false
}
