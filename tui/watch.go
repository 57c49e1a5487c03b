package tui

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// watchFile reports changes of the file at path (written, replaced by a
// rename, removed) through fsnotify on its directory: no polling, so an
// idle perch does not wake up. The directory is watched rather than the
// file because the outbox replaces its file by a rename. ok is false when
// the platform has no file notifications; the caller then polls.
func watchFile(ctx context.Context, path string) (<-chan struct{}, bool) {
	dir, name := filepath.Dir(path), filepath.Base(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, false
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, false
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				// The file itself, or the directory removed or moved.
				if filepath.Base(ev.Name) != name && filepath.Clean(ev.Name) != dir {
					continue
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				// An overflowed queue may have lost the file's event:
				// report a change so the caller re-reads.
				if !errors.Is(err, fsnotify.ErrEventOverflow) {
					continue
				}
			}
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	return ch, true
}
