package claudecode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/tally"
)

// settle gathers a burst of file events (a reply written line by line,
// a registry file rewritten) into one listing.
const settle = 50 * time.Millisecond

// WatchSessions calls on with the list of sessions at once and each time
// it changes: a registry file written or removed, a transcript written
// (inotify on sessions/, projects/ and each project directory), and a
// running process gone (its pid is looked at every recheck: a kill
// leaves no file event).
func (l *Local) WatchSessions(ctx context.Context, on func([]events.Task)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("claude-code: watch %s: %w", l.dir, err)
	}
	defer w.Close()
	watched := map[string]bool{}
	add := func(d string) {
		if !watched[d] && w.Add(d) == nil {
			watched[d] = true
		}
	}
	watchAll := func() {
		add(l.dir)
		add(filepath.Join(l.dir, "sessions"))
		root := filepath.Join(l.dir, "projects")
		add(root)
		if ents, err := os.ReadDir(root); err == nil {
			for _, e := range ents {
				if e.IsDir() {
					add(filepath.Join(root, e.Name()))
				}
			}
		}
	}
	watchAll()
	var last []events.Task
	var running map[string]registryFile
	files, err := l.scan(ctx)
	if err != nil {
		return err
	}
	projects := filepath.Join(l.dir, "projects")
	// changed are the transcripts written since the last listing; a
	// listing re-reads only them (and the registry files, always).
	changed := map[string]bool{}
	rescan := false
	list := func() error {
		if rescan {
			rescan = false
			clear(changed)
			if files, err = l.scan(ctx); err != nil {
				return err
			}
		}
		for p := range changed {
			id := strings.TrimSuffix(filepath.Base(p), ".jsonl")
			if t, ok := l.fileTask(id, p); ok {
				files[id] = t
			} else {
				delete(files, id)
			}
		}
		clear(changed)
		live, stale := l.registries()
		running = live
		cur := compose(files, live, stale)
		if last == nil || !events.EqualTasks(cur, last) {
			last = cur
			on(cur)
		}
		return nil
	}
	if err := list(); err != nil {
		return err
	}
	// The token counts, off this loop: the backlog newest first, then
	// each transcript as it changes.
	cnt := tally.NewCounter(l.totals)
	cctx, stopCounting := context.WithCancel(ctx)
	counting := make(chan struct{})
	go func() {
		defer close(counting)
		cnt.Run(cctx)
	}()
	defer func() { stopCounting(); <-counting }()
	cnt.Add(false, withSubagents(newestFirst(l.transcripts(), files)...)...)
	tick := time.NewTicker(recheck)
	defer tick.Stop()
	var due <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			rel, err := filepath.Rel(projects, ev.Name)
			switch {
			case err == nil && strings.Count(rel, string(filepath.Separator)) == 1 && strings.HasSuffix(rel, ".jsonl"):
				changed[ev.Name] = true
				// Its subagents wrote their lines before the session's
				// transcript took their results: count them with it.
				cnt.Add(true, withSubagents(ev.Name)...)
			case err == nil && !strings.HasPrefix(rel, "..") && !strings.ContainsRune(rel, filepath.Separator):
				// A project directory made or removed, or projects/
				// itself: look at everything again. (A session's own
				// directory, of its subagents, changes nothing listed.)
				if ev.Op&fsnotify.Create != 0 {
					watchAll()
				}
				rescan = true
			case err == nil && !strings.HasPrefix(rel, ".."):
				// Deeper: a session's subagents, nothing listed.
			case ev.Op&fsnotify.Create != 0:
				watchAll()
				rescan = rescan || filepath.Base(ev.Name) == "projects"
			}
			if due == nil {
				due = time.After(settle)
			}
		case <-w.Errors:
			// Events were lost (an overflow): look at everything again.
			rescan = true
			if due == nil {
				due = time.After(settle)
			}
		case paths := <-cnt.Out():
			for _, p := range paths {
				changed[p] = true
			}
			if due == nil {
				due = time.After(settle)
			}
		case <-due:
			due = nil
			if err := list(); err != nil {
				return err
			}
		case <-tick.C:
			if l.livenessChanged(running) {
				if err := list(); err != nil {
					return err
				}
			}
		}
	}
}

// newestFirst orders the transcripts' paths by their sessions' last
// activity, the latest first.
func newestFirst(paths map[string]string, files map[string]events.Task) []string {
	ids := make([]string, 0, len(paths))
	for id := range paths {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return files[b].Updated.Compare(files[a].Updated) })
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = paths[id]
	}
	return out
}

// livenessChanged: a process listed as running is gone (a kill leaves
// its registry file behind, and no event).
func (l *Local) livenessChanged(running map[string]registryFile) bool {
	for _, r := range running {
		if !l.alive(r.PID, r.ProcStart) {
			return true
		}
	}
	return false
}
