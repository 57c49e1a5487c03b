package codex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

const (
	// readChunk is the most of a rollout read and decoded at once: a
	// long history comes in updates of this much.
	readChunk = 256 << 10
	// lockPoll is how often a followed or watched session's writer lock
	// is looked at: a lock's release makes no file event.
	lockPoll = time.Second
	// settle gathers the file events of a burst (Codex writes several
	// lines per item) into one look at the list.
	settle = 100 * time.Millisecond
)

// Follow sends the rollout of the thread and then each line Codex
// appends, reading only the appended bytes (a line still being written
// waits for its end). A file truncated or replaced starts over (Reset).
// When the Codex that held the thread exits, a notice and a stopped state
// say so.
func (l *Local) Follow(ctx context.Context, sessionID string, on func(client.Update)) error {
	path, err := l.path(ctx, sessionID)
	if err != nil {
		return err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", path, err)
	}
	defer w.Close()
	// The directory, not the file: a file replaced by another of the same
	// name is seen too.
	if err := w.Add(filepath.Dir(path)); err != nil {
		return fmt.Errorf("watching %s: %w", filepath.Dir(path), err)
	}
	thread := filepath.Base(path)
	if m := threadID.FindStringSubmatch(thread); m != nil {
		thread = m[1]
	}
	f := &tailer{path: path, on: on, lock: l.lockPath(thread)}
	defer f.close()
	if err := f.read(true); err != nil {
		return err
	}
	f.live = f.held()
	if !f.live {
		// No Codex holds it: a turn the file leaves running was cut off
		// when its Codex died, and runs no more.
		on(client.Update{Events: []events.Event{{Kind: events.KindRunState, RunStatus: events.StatusStopped}}})
	}
	tick := time.NewTicker(lockPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("the file watch ended")
			}
			if ev.Name == path {
				if err := f.read(false); err != nil {
					return err
				}
			}
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("the file watch ended")
			}
			// Events may have been lost (an overflow): read what is there.
			_ = err
			if err := f.read(false); err != nil {
				return err
			}
		case <-tick.C:
			// A missed event costs at most this long; and the lock.
			if err := f.read(false); err != nil {
				return err
			}
			f.checkLock()
		}
	}
}

// tailer reads one rollout as it grows.
type tailer struct {
	path, lock string
	on         func(client.Update)
	file       *os.File
	info       os.FileInfo // of the file open, to tell a replacement
	off        int64
	partial    []byte // a line not yet ended
	skip       bool   // the rest of a line too long to hold is dropped
	n          int    // lines decoded
	dec        *Decoder
	live       bool
	buf        []byte // reads go here, reused
}

func (f *tailer) close() {
	if f.file != nil {
		f.file.Close()
	}
}

// read hands on what was appended since the last read; the first read
// (and a start over) sends the whole file, marked Synced at its end.
func (f *tailer) read(first bool) error {
	fi, err := os.Stat(f.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // being replaced: the new file's event comes
		}
		return fmt.Errorf("reading %s: %w", f.path, err)
	}
	reset := false
	if f.file == nil || !os.SameFile(fi, f.info) || fi.Size() < f.off {
		reset = f.file != nil
		if f.file != nil {
			f.file.Close()
		}
		if f.file, err = os.Open(f.path); err != nil {
			return fmt.Errorf("reading %s: %w", f.path, err)
		}
		f.info, f.off, f.partial, f.skip, f.n = fi, 0, nil, false, 0
		f.dec = NewDecoder()
		f.dec.Live = true
		first = true
	}
	if fi.Size() == f.off && !first {
		return nil
	}
	if f.buf == nil {
		f.buf = make([]byte, readChunk)
	}
	buf := f.buf
	for {
		n, err := f.file.ReadAt(buf, f.off)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading %s: %w", f.path, err)
		}
		f.off += int64(n)
		evs := f.decode(buf[:n])
		more := n == len(buf)
		u := client.Update{Events: evs, Reset: reset, Synced: !more && first}
		if len(evs) > 0 || reset || u.Synced {
			f.on(u)
		}
		reset = false
		if !more {
			return nil
		}
	}
}

// decode takes bytes read and decodes every line they end.
func (f *tailer) decode(b []byte) []events.Event {
	var out []events.Event
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			f.partial = append(f.partial, b...)
			if len(f.partial) > maxLine {
				// Not a line perch can hold: dropped, said once.
				out = append(out, notice(events.LevelWarning, events.NoticeError,
					"A line of the rollout longer than "+strconv.Itoa(maxLine>>20)+" MiB was left out."))
				f.partial = f.partial[:0:0]
				f.skip = true
			}
			return out
		}
		line := b[:i]
		if len(f.partial) > 0 {
			line = append(f.partial, line...)
			f.partial = nil
		}
		if f.skip {
			f.skip = false
		} else if len(bytes.TrimSpace(line)) > 0 {
			f.n++
			out = append(out, f.dec.Decode("line "+strconv.Itoa(f.n), line)...)
		}
		b = b[i+1:]
	}
	return out
}

// maxLine bounds a line held while it is written.
const maxLine = 64 << 20

// held says whether a Codex holds the thread's writer lock.
func (f *tailer) held() bool {
	return heldLocks([]string{f.lock})[f.lock]
}

// checkLock says so when the Codex that held the thread lets it go.
func (f *tailer) checkLock() {
	now := f.held()
	if now == f.live {
		return
	}
	f.live = now
	if now {
		f.on(client.Update{Events: []events.Event{notice(events.LevelInfo, events.NoticeHost, "Codex holds this session again.")}})
		return
	}
	f.on(client.Update{Events: []events.Event{
		notice(events.LevelInfo, events.NoticeHost, "Codex let go of this session (it exited)."),
		{Kind: events.KindRunState, RunStatus: events.StatusStopped},
	}})
}
