package claudecode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/perch-tui/perch/events"
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
	list := func() error {
		cur, live, err := l.sessions(ctx)
		if err != nil {
			return err
		}
		running = live
		if last == nil || !slices.EqualFunc(cur, last, sameTask) {
			last = cur
			if last == nil {
				last = []events.Task{}
			}
			on(cur)
		}
		return nil
	}
	if err := list(); err != nil {
		return err
	}
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
			if ev.Op&fsnotify.Create != 0 {
				watchAll()
			}
			if due == nil {
				due = time.After(settle)
			}
		case <-w.Errors:
			// An overflow lost events: list again.
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

func sameTask(a, b events.Task) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Status == b.Status && a.WaitingFor == b.WaitingFor &&
		a.Cwd == b.Cwd && a.Updated.Equal(b.Updated) && a.Created.Equal(b.Created)
}
