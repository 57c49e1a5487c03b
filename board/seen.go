package board

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/perch-tui/perch/outbox"
)

// Marks are what the user has seen: per source and session (Key), the
// last activity time they saw. A mark only ever moves forward, which is
// what lets two perch processes share the file: each merges the file's
// marks with its own, keeping the later one.
type Marks map[string]time.Time

// Key names a session of a source for Marks: the source's URL (not its
// name, which the user may change) and the session's id.
func Key(sourceURL, session string) string { return sourceURL + " " + session }

// Seen keeps Marks in one file under perch's state directory, written
// atomically (a new file renamed over the old one) under a lock.
type Seen struct {
	path string
	// mu guards last: every source's goroutine saves through one Seen.
	mu   sync.Mutex
	last os.FileInfo // the file as last read, to tell a change cheaply
}

func (s *Seen) setLast(fi os.FileInfo) {
	s.mu.Lock()
	s.last = fi
	s.mu.Unlock()
}

// SeenFile is where Seen keeps its marks under the state directory.
func SeenFile(stateDir string) string { return filepath.Join(stateDir, "seen.json") }

// OpenSeen returns the marks file at path (nothing is created until Save).
func OpenSeen(path string) *Seen { return &Seen{path: path} }

// seenFile is the file's format.
type seenFile struct {
	Version int               `json:"version"`
	Seen    map[string]string `json:"seen"` // Key → RFC 3339 time
}

// Load reads the marks (none when there is no file yet).
func (s *Seen) Load() (Marks, error) {
	fi, _ := os.Stat(s.path)
	m, err := s.read()
	if err == nil {
		s.setLast(fi)
	}
	return m, err
}

func (s *Seen) read() (Marks, error) {
	raw, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return Marks{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("seen marks: %w", err)
	}
	var f seenFile
	if err := json.Unmarshal(raw, &f); err != nil {
		// A damaged file forgets what was seen; it is rewritten whole
		// at the next Save.
		return Marks{}, nil
	}
	out := make(Marks, len(f.Seen))
	for k, v := range f.Seen {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			out[k] = t
		}
	}
	return out, nil
}

// Changed reports whether the file changed since it was last read or
// written (one stat: cheap enough for a short interval).
func (s *Seen) Changed() bool {
	fi, _ := os.Stat(s.path)
	s.mu.Lock()
	a, b := s.last, fi
	s.mu.Unlock()
	if a == nil || b == nil {
		return (a == nil) != (b == nil)
	}
	return !os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime())
}

// Save merges marks into the file, keeping the later mark of each key,
// and returns the merged marks. The read, merge and rename happen under
// the file's lock, so two perch processes saving at once lose nothing.
func (s *Seen) Save(marks Marks) (Marks, error) {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return nil, fmt.Errorf("seen marks: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	unlock, err := outbox.LockFile(ctx, s.path+".lock")
	if err != nil {
		return nil, fmt.Errorf("seen marks: %w", err)
	}
	defer unlock()
	cur, err := s.read()
	if err != nil {
		return nil, err
	}
	merged := merge(cur, marks)
	if err := writeAtomic(s.path, merged); err != nil {
		return nil, err
	}
	fi, _ := os.Stat(s.path)
	s.setLast(fi)
	return merged, nil
}

func merge(a, b Marks) Marks {
	out := make(Marks, len(a)+len(b))
	for k, t := range a {
		out[k] = t
	}
	for k, t := range b {
		if t.After(out[k]) || out[k].IsZero() {
			out[k] = t
		}
	}
	return out
}

func writeAtomic(path string, m Marks) error {
	f := seenFile{Version: 1, Seen: make(map[string]string, len(m))}
	for k, t := range m {
		f.Seen[k] = t.UTC().Format(time.RFC3339Nano)
	}
	data, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return fmt.Errorf("seen marks: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-seen-*")
	if err != nil {
		return fmt.Errorf("seen marks: %w", err)
	}
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("seen marks: write %s: %w", path, err)
	}
	return nil
}
