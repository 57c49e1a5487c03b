// Package spill keeps large texts of a long session out of the Go heap: an
// append-only file under the user's cache directory that texts are written
// to as they arrive and read back with ReadAt (pread) when a view needs
// them. One file per process and session; it is removed when closed, and
// the files of processes that died without closing them are swept when the
// next one opens.
//
// It uses plain files only: no mapping (a file truncated under a mapping
// kills the process with SIGBUS), no process-wide settings. A file that
// cannot be made or written makes Put fail, and its caller keeps the text
// in memory; a file removed or truncated under a running perch makes Get
// fail with ErrGone, and its caller shows that instead of the text.
package spill

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// ErrGone is what Get reports when the text is no longer in the file: it
// was removed or truncated by someone else.
var ErrGone = errors.New("spill file was removed or truncated")

// suffix names spill files, so a sweep touches nothing else.
const suffix = ".spill"

// flushAt is how many bytes Put gathers before it writes them: one write
// per megabyte, not one per text.
const flushAt = 1 << 20

// File is an append-only file of texts. Its methods may be called from
// several goroutines.
type File struct {
	mu   sync.Mutex
	f    *os.File
	path string
	buf  []byte // written by Put, not yet in the file
	size int64  // bytes in the file (buf starts there)
	err  error  // why texts cannot be written (Put fails with it)
}

// Dir is where spill files live: perch/spill under the user's cache
// directory.
func Dir() (string, error) {
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("spill: no cache directory: %w", err)
	}
	return filepath.Join(c, "perch", "spill"), nil
}

// Open makes the spill file of one session in Dir, after sweeping the
// files dead processes left there. It never returns nil: when the file
// cannot be made, every Put fails with the reason (see File.Err).
func Open(session string) *File {
	dir, err := Dir()
	if err != nil {
		return &File{err: err}
	}
	return OpenIn(dir, session)
}

// OpenIn is Open in dir.
func OpenIn(dir, session string) *File {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return &File{err: fmt.Errorf("spill: %w", err)}
	}
	Sweep(dir)
	pattern := strconv.Itoa(os.Getpid()) + "-" + safeName(session) + "-*" + suffix
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return &File{err: fmt.Errorf("spill: %w", err)}
	}
	// The lock says the file is in use; it goes with the process, so a
	// sweep can tell a crashed process's file from a running one's.
	if err := lockFile(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return &File{err: fmt.Errorf("spill: lock %s: %w", f.Name(), err)}
	}
	return &File{f: f, path: f.Name()}
}

// safeName keeps a session id readable in a file name and harmless.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 40 {
			break
		}
		if r < 0x80 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "session"
	}
	return b.String()
}

// Path is the file's path ("" when there is none).
func (f *File) Path() string { return f.path }

// Err is why texts cannot be written to the file, nil while they can.
func (f *File) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Put appends s and returns its offset. After an error (the directory was
// not writable, the disk is full) every later Put fails too: the caller
// keeps its texts in memory.
func (f *File) Put(s string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return 0, f.err
	}
	off := f.size + int64(len(f.buf))
	f.buf = append(f.buf, s...)
	if len(f.buf) >= flushAt {
		if err := f.flushLocked(); err != nil {
			return 0, err
		}
	}
	return off, nil
}

func (f *File) flushLocked() error {
	if len(f.buf) == 0 {
		return nil
	}
	n, err := f.f.WriteAt(f.buf, f.size)
	if err != nil {
		// What was not written is lost for the file; the texts already
		// handed out in buf stay readable from it.
		f.err = fmt.Errorf("spill: write %s: %w", f.path, err)
		f.size += int64(n)
		f.buf = f.buf[n:]
		return f.err
	}
	f.size += int64(n)
	f.buf = f.buf[:0]
	if cap(f.buf) > 2*flushAt {
		f.buf = nil
	}
	return nil
}

// Get reads back n bytes put at off. It fails with ErrGone when the file
// no longer holds them.
func (f *File) Get(off int64, n int) (string, error) {
	if n == 0 {
		return "", nil
	}
	f.mu.Lock()
	if f.f == nil {
		f.mu.Unlock()
		return "", ErrGone
	}
	if off >= f.size {
		// Still in the buffer (Put's failure may have left it there).
		i := off - f.size
		if i+int64(n) > int64(len(f.buf)) {
			f.mu.Unlock()
			return "", ErrGone
		}
		s := string(f.buf[i : i+int64(n)])
		f.mu.Unlock()
		return s, nil
	}
	if off+int64(n) > f.size {
		// Partly written: write the rest first.
		if err := f.flushLocked(); err != nil && off+int64(n) > f.size {
			f.mu.Unlock()
			return "", ErrGone
		}
	}
	file := f.f
	f.mu.Unlock()
	b := make([]byte, n)
	if _, err := file.ReadAt(b, off); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
			return "", ErrGone
		}
		return "", fmt.Errorf("spill: read %s: %w", f.path, err)
	}
	return string(b), nil
}

// Reader reads n bytes put at off as a stream, for a search or an export
// that goes through a text without holding it whole.
func (f *File) Reader(off int64, n int) io.Reader {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.f == nil || off+int64(n) > f.size+int64(len(f.buf)) {
		return errReader{ErrGone}
	}
	if off+int64(n) > f.size {
		if err := f.flushLocked(); err != nil && off+int64(n) > f.size {
			return errReader{ErrGone}
		}
	}
	return &goneReader{io.NewSectionReader(f.f, off, int64(n)), int64(n)}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// goneReader turns a section that ends early (the file was truncated)
// into ErrGone instead of a short, silent EOF.
type goneReader struct {
	r    *io.SectionReader
	left int64
}

func (g *goneReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.left -= int64(n)
	if err == io.EOF && g.left > 0 {
		err = ErrGone
	}
	return n, err
}

// Close closes and removes the file. The texts put in it are gone.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	f.f, f.buf = nil, nil
	if rerr := os.Remove(f.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("spill: close %s: %w", f.path, err)
	}
	return nil
}

// Sweep removes the spill files in dir that no running process holds:
// those a crash (or a kill) left behind. Errors are ignored: a file that
// cannot be removed now is tried again at the next start.
func Sweep(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), suffix) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if unheld(p) {
			os.Remove(p)
		}
	}
}
