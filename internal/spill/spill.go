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
// per quarter megabyte, not one per text.
const flushAt = 256 << 10

// File is an append-only file of texts. Its methods may be called from
// several goroutines. Put gathers texts into chunks of flushAt bytes that
// a goroutine of the file writes, so the writing (system time, on some
// file systems as much as decoding a stream) overlaps the caller's work;
// a text waiting to be written is read from its chunk.
type File struct {
	send    sync.Mutex // Put's hand-over to the writer and Close's end of it
	mu      sync.Mutex
	written *sync.Cond // signalled (with mu) when the writer is done with a chunk
	f       *os.File
	path    string
	cur     []byte  // texts put since the last chunk went to the writer
	curOff  int64   // offset of cur[0]
	pending []chunk // handed to the writer and not yet written, in order
	err     error   // why texts cannot be written (Put fails with it)

	queue chan chunk    // to the writer
	done  chan struct{} // closed when the writer has stopped
	free  chan []byte   // written chunks' buffers, for reuse
}

// chunk is texts written at off.
type chunk struct {
	off int64
	b   []byte
}

// pendingMax is how many chunks may wait for the writer before Put waits:
// the memory a slow disk can hold up.
const pendingMax = 3

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
	sf := &File{f: f, path: f.Name(), queue: make(chan chunk, pendingMax),
		done: make(chan struct{}), free: make(chan []byte, pendingMax)}
	sf.written = sync.NewCond(&sf.mu)
	go sf.writer(f)
	return sf
}

// writer writes the chunks in order. A chunk it could not write stays
// pending (its texts are read from memory) and every later Put fails.
func (f *File) writer(file *os.File) {
	defer close(f.done)
	for c := range f.queue {
		f.mu.Lock()
		failed := f.err != nil
		f.mu.Unlock()
		var err error
		if !failed {
			_, err = file.WriteAt(c.b, c.off)
		}
		f.mu.Lock()
		switch {
		case failed:
		case err != nil:
			f.err = fmt.Errorf("spill: write %s: %w", f.path, err)
		case len(f.pending) > 0:
			f.pending[0] = chunk{} // the array must not keep the buffer
			f.pending = f.pending[1:]
			if cap(c.b) <= 2*flushAt { // a big text's own buffer goes
				select {
				case f.free <- c.b[:0]:
				default:
				}
			}
		}
		f.written.Broadcast()
		f.mu.Unlock()
	}
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
	f.send.Lock()
	defer f.send.Unlock()
	f.mu.Lock()
	if f.err != nil || f.f == nil {
		err := f.err
		f.mu.Unlock()
		if err == nil {
			err = fmt.Errorf("spill: %s is closed", f.path)
		}
		return 0, err
	}
	off := f.curOff + int64(len(f.cur))
	if f.cur == nil && len(s) < flushAt {
		select {
		case f.cur = <-f.free:
		default:
			f.cur = make([]byte, 0, flushAt+flushAt/4)
		}
	}
	f.cur = append(f.cur, s...)
	var c chunk
	if len(f.cur) >= flushAt {
		c = f.cutLocked()
	}
	f.mu.Unlock()
	if c.b != nil {
		f.queue <- c // waits while pendingMax chunks are not written
	}
	return off, nil
}

// cutLocked makes cur a chunk for the writer.
func (f *File) cutLocked() chunk {
	c := chunk{off: f.curOff, b: f.cur}
	f.pending = append(f.pending, c)
	f.curOff += int64(len(f.cur))
	f.cur = nil
	return c
}

// Flush writes every text put so far and waits until it is in the file
// (or the writing failed: Err).
func (f *File) Flush() error {
	f.send.Lock()
	defer f.send.Unlock()
	f.mu.Lock()
	if f.f == nil || f.err != nil {
		defer f.mu.Unlock()
		return f.err
	}
	var c chunk
	if len(f.cur) > 0 {
		c = f.cutLocked()
	}
	f.mu.Unlock()
	if c.b != nil {
		f.queue <- c
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.pending) > 0 && f.err == nil {
		f.written.Wait()
	}
	return f.err
}

// Get reads back n bytes put at off. It fails with ErrGone when the file
// no longer holds them.
func (f *File) Get(off int64, n int) (string, error) {
	if n == 0 {
		return "", nil
	}
	f.mu.Lock()
	if s, ok := f.inMemoryLocked(off, n); ok {
		f.mu.Unlock()
		return s, nil
	}
	file := f.f
	f.mu.Unlock()
	if file == nil {
		return "", ErrGone
	}
	b := make([]byte, n)
	if _, err := file.ReadAt(b, off); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
			return "", ErrGone
		}
		return "", fmt.Errorf("spill: read %s: %w", f.path, err)
	}
	return string(b), nil
}

// ReadAt fills p with the bytes put from off on, as Get reads them, into
// the caller's buffer: a search reads every output of a session through
// one buffer instead of a string of each.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	f.mu.Lock()
	if b, ok := f.inMemoryBytesLocked(off, len(p)); ok {
		n := copy(p, b)
		f.mu.Unlock()
		return n, nil
	}
	file := f.f
	f.mu.Unlock()
	if file == nil {
		return 0, ErrGone
	}
	n, err := file.ReadAt(p, off)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
			return n, ErrGone
		}
		return n, fmt.Errorf("spill: read %s: %w", f.path, err)
	}
	return n, nil
}

// inMemoryLocked copies a text that is not written yet (a text never
// spans two chunks: Put cuts chunks between texts).
func (f *File) inMemoryLocked(off int64, n int) (string, bool) {
	b, ok := f.inMemoryBytesLocked(off, n)
	return string(b), ok
}

// inMemoryBytesLocked is the not yet written text at off, in place.
func (f *File) inMemoryBytesLocked(off int64, n int) ([]byte, bool) {
	if f.f == nil {
		return nil, false
	}
	if off >= f.curOff {
		i := off - f.curOff
		if i+int64(n) > int64(len(f.cur)) {
			return nil, false
		}
		return f.cur[i : i+int64(n)], true
	}
	for _, c := range f.pending {
		if off >= c.off && off+int64(n) <= c.off+int64(len(c.b)) {
			return c.b[off-c.off : off-c.off+int64(n)], true
		}
	}
	return nil, false
}

// Reader reads n bytes put at off as a stream, for a search or an export
// that goes through a text without holding it whole.
func (f *File) Reader(off int64, n int) io.Reader {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.inMemoryLocked(off, n); ok {
		return strings.NewReader(s)
	}
	if f.f == nil {
		return errReader{ErrGone}
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
	f.send.Lock()
	defer f.send.Unlock()
	f.mu.Lock()
	if f.f == nil {
		f.mu.Unlock()
		return nil
	}
	file := f.f
	f.f, f.cur, f.pending = nil, nil, nil
	f.mu.Unlock()
	close(f.queue)
	<-f.done
	err := file.Close()
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
