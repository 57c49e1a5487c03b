package claudecode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// maxLine bounds one transcript line held while it is being written (the
// CLI writes lines of a few hundred kilobytes; a line past this is
// skipped whole, with a notice, rather than held in memory).
const maxLine = 32 << 20

// readChunk is how much a tail reads at a time.
const readChunk = 256 << 10

// tail reads a file that grows by whole lines, only the bytes appended
// since the last read. A last line without its newline is being written:
// it is held until the newline comes. A file replaced (another inode) or
// truncated starts over (reset).
type tail struct {
	path    string
	f       *os.File
	fi      os.FileInfo
	off     int64  // bytes read from f
	partial []byte // the line being written
	// skipping: a line longer than maxLine is being dropped up to its
	// newline.
	skipping bool
}

// tailRead is what one read found.
type tailRead struct {
	// reset: the file was replaced or truncated: lines start over from
	// its beginning.
	reset bool
	lines [][]byte // whole lines, without their newline
	// skipped counts lines dropped for their size.
	skipped int
	// more: the read stopped at its budget before the end of the file.
	more bool
}

// read reads what was appended since the last call, about budget bytes
// at most (more says there is more; 0 reads to the end). A file that
// does not exist (yet) reads as nothing.
func (t *tail) read(budget int64) (tailRead, error) {
	var r tailRead
	fi, err := os.Stat(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		if t.f != nil {
			// Removed: whatever comes next at the path is a new file.
			t.close()
			r.reset = true
		}
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("tail %s: %w", t.path, err)
	}
	if t.f != nil && (!os.SameFile(fi, t.fi) || fi.Size() < t.off) {
		t.close()
		r.reset = true
	}
	if t.f == nil {
		f, err := os.Open(t.path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return r, nil
			}
			return r, fmt.Errorf("tail %s: %w", t.path, err)
		}
		ofi, err := f.Stat()
		if err != nil {
			f.Close()
			return r, fmt.Errorf("tail %s: %w", t.path, err)
		}
		t.f, t.fi, t.off = f, ofi, 0
	}
	buf := make([]byte, readChunk)
	var got int64
	for {
		if budget > 0 && got >= budget {
			r.more = true
			return r, nil
		}
		n, err := t.f.ReadAt(buf, t.off)
		if n > 0 {
			t.off += int64(n)
			got += int64(n)
			t.feed(buf[:n], &r)
		}
		if err == io.EOF || n == 0 {
			return r, nil
		}
		if err != nil {
			return r, fmt.Errorf("tail %s: %w", t.path, err)
		}
	}
}

// feed splits data into lines after what is held.
func (t *tail) feed(data []byte, r *tailRead) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if t.skipping {
				return
			}
			if len(t.partial)+len(data) > maxLine {
				t.partial, t.skipping = nil, true
				r.skipped++
				return
			}
			t.partial = append(t.partial, data...)
			return
		}
		line := data[:i]
		data = data[i+1:]
		if t.skipping {
			t.skipping = false
			continue
		}
		if len(t.partial) > 0 {
			if len(t.partial)+len(line) > maxLine {
				t.partial = nil
				r.skipped++
				continue
			}
			line = append(t.partial, line...)
			t.partial = nil
		} else {
			line = bytes.Clone(line)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			r.lines = append(r.lines, line)
		}
	}
}

func (t *tail) close() {
	if t.f != nil {
		t.f.Close()
	}
	t.f, t.fi, t.off, t.partial, t.skipping = nil, nil, 0, nil, false
}
