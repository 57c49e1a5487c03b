package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// Options are the choices a user can make about what to import.
type Options struct {
	// Chat picks one conversation of a file that holds several (pynchy's
	// chat jid).
	Chat string
	// Session picks one session of a store that holds several (Attocode).
	Session string
	// Stdin is what the path "-" reads (standard input).
	Stdin io.Reader
}

// UsageError is a problem the user can fix with a flag (perch exits 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// BadRecord describes a record that did not decode, with its position, so
// that importers can turn it into a visible notice and go on.
func BadRecord(pos string, raw []byte, why string) string {
	return fmt.Sprintf("%s: %s: %s", pos, why, events.Excerpt(bytes.TrimSpace(raw), 120))
}

// EachFrame streams the frames of an SSE recording. A truncated last frame
// is reported as sse.ErrTruncated after the complete ones.
func EachFrame(path string, fn func(events.Frame) error) error {
	f, r, err := openBuffered(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return sse.ReadFrames(r, fn)
}

// ScanFrames is EachFrame for a caller that only looks at each frame: its
// Data is valid until fn returns.
func ScanFrames(path string, fn func(events.Frame) error) error {
	f, r, err := openBuffered(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return sse.ReadFrames(r, fn)
}

// EachLine streams the lines of a JSON-lines file: line is 1-based, raw is
// the line with Python's non-finite numbers repaired (see Repair), valid
// until fn returns. Blank lines are skipped; lines may be of any length and
// end in LF or CRLF; a BOM is dropped.
func EachLine(path string, fn func(line int, raw []byte) error) error {
	f, r, err := openBuffered(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return eachLine(r, fn)
}

func eachLine(r *bufio.Reader, fn func(int, []byte) error) error {
	var buf []byte
	for n := 1; ; n++ {
		buf = buf[:0]
		for {
			chunk, err := r.ReadSlice('\n')
			buf = append(buf, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("read line %d: %w", n, err)
			}
			if err != nil && len(buf) == 0 {
				return nil
			}
			break
		}
		line := bytes.TrimSpace(buf)
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if len(line) > 0 {
			if err := fn(n, Repair(line)); err != nil {
				return err
			}
		}
		if len(buf) == 0 || buf[len(buf)-1] != '\n' {
			return nil
		}
	}
}

// EachElement streams a JSON document: the elements of a top-level array,
// or those of the array-valued field of a top-level object (field "" takes
// the first array-valued field). The object's other fields come back in
// top. Only one element is in memory at a time; each raw is a new slice,
// the caller's to keep.
func EachElement(path, field string, fn func(i int, raw json.RawMessage) error) (top Record, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // an *os.PathError names the path
	}
	defer f.Close()
	top, err = elementsOf(f, field, fn)
	if errors.Is(err, errSeek) {
		err = fmt.Errorf("read %s again: %w", path, err)
	}
	return top, err
}

var errSeek = errors.New("cannot read the document again")

// elementsOf is EachElement over a file's contents.
func elementsOf(f io.ReadSeeker, field string, fn func(int, json.RawMessage) error) (Record, error) {
	r := bufio.NewReaderSize(f, 1<<20)
	if b, _ := r.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		_, _ = r.Discard(3)
	}
	top, n, unusual, err := readDocument(NewRepairReader(r), field, fn)
	if !unusual {
		return top, err
	}
	// Not a well-formed document: encoding/json reads it again, from the
	// start, to fail (or not) as it does; the elements delivered already
	// are not delivered twice.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%w: %w", errSeek, err)
	}
	r.Reset(f)
	if b, _ := r.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		_, _ = r.Discard(3)
	}
	return eachElement(NewRepairReader(r), field, skipFirst(n, fn))
}

// skipFirst is fn without its first n calls.
func skipFirst(n int, fn func(int, json.RawMessage) error) func(int, json.RawMessage) error {
	seen := 0
	return func(i int, raw json.RawMessage) error {
		if seen++; seen <= n {
			return nil
		}
		return fn(i, raw)
	}
}

// eachElement is EachElement with encoding/json's streaming decoder, for
// documents the fast reader (readDocument) does not take.
func eachElement(r io.Reader, field string, fn func(int, json.RawMessage) error) (Record, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not a JSON document: %w", err)
	}
	d, _ := tok.(json.Delim)
	switch d {
	case '[':
		return nil, elements(dec, fn)
	case '{':
	default:
		return nil, fmt.Errorf("not a JSON object or array")
	}
	top := Record{}
	done := false
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return top, fmt.Errorf("read document: %w", err)
		}
		key, _ := kt.(string)
		if !done && (field == "" || key == field) && peekArray(dec) {
			if _, err := dec.Token(); err != nil {
				return top, fmt.Errorf("read %q: %w", key, err)
			}
			if err := elements(dec, fn); err != nil {
				return top, err
			}
			done = true
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return top, fmt.Errorf("read %q: %w", key, err)
		}
		top[key] = raw
	}
	return top, nil
}

// elements decodes array elements until the closing bracket.
func elements(dec *json.Decoder, fn func(int, json.RawMessage) error) error {
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("element %d: %w", i+1, err)
		}
		if err := fn(i, raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("read array end: %w", err)
	}
	return nil
}

// Importer reads one system's files. Each system's package provides one;
// client/registry holds the list and picks one for a file.
type Importer struct {
	// Name is what --from takes ("suna").
	Name string
	// Expects says in one line what files --from Name reads.
	Expects string
	// Detect scores how surely the sampled file is this system's: 0 for
	// no, up to 100 for certain.
	Detect func(s *Sample) int
	// Import reads the whole file and emits its normalized events in
	// order. Records that do not decode become KindNotice events with their
	// position, never an error; an error means the file as a whole could
	// not be read (a *UsageError when a flag would fix it).
	Import func(ctx context.Context, s *Sample, opts Options, emit func(events.Event)) error
	// Billing reads one line of a session file for what it cost (see
	// Billing); nil for a system whose files carry no per-request usage
	// (its events' usage is then all there is).
	Billing func(line []byte) Billing
}
