package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// Shape is how a file's bytes are laid out.
type Shape uint8

const (
	ShapeUnknown Shape = iota
	// ShapeSSE is a recorded server-sent-events stream (`event:`/`data:`
	// lines and blank lines between frames).
	ShapeSSE
	// ShapeJSONL is one JSON value per line.
	ShapeJSONL
	// ShapeJSON is a single JSON document (an object or an array).
	ShapeJSON
	// ShapeSQLite is a SQLite database file.
	ShapeSQLite
)

func (s Shape) String() string {
	switch s {
	case ShapeSSE:
		return "sse"
	case ShapeJSONL:
		return "jsonl"
	case ShapeJSON:
		return "json"
	case ShapeSQLite:
		return "sqlite"
	}
	return "unknown"
}

// Record is one JSON object of a sample, its fields kept raw.
type Record = map[string]json.RawMessage

// Sample is what an importer looks at to recognise a file: its shape and
// its first records, decoded leniently. It is cheap: only the head of the
// file is read.
type Sample struct {
	// Path is the file importers read, by name, as often as they need.
	Path string
	// Name is what the user called the input, for messages: the path, or
	// "stdin". A stream's Path is a temporary copy (see SniffStream).
	Name  string
	Shape Shape
	// Head is the first bytes of the file (up to HeadSize, BOM removed).
	Head []byte
	// Frames are the first complete frames of an SSE recording.
	Frames []events.Frame
	// Records are the first JSON objects: the data of SSE frames, the lines
	// of JSON lines, the elements of a top-level array, or the elements of
	// the first array-valued field of a top-level object (see Field).
	Records []Record
	// Top is a top-level JSON object, with array values elided (see Field).
	Top Record
	// Field names the array field of Top that Records come from ("" when
	// the document is an array or the records come from elsewhere).
	Field string
	// TopArray is set when the document is a JSON array.
	TopArray bool

	// spooled is the temporary copy of a stream, removed by Close.
	spooled string
}

// Close removes the temporary copy a stream was read into; it does
// nothing for a regular file.
func (s *Sample) Close() error {
	if s == nil || s.spooled == "" {
		return nil
	}
	err := os.Remove(s.spooled)
	s.spooled = ""
	return err
}

// HeadSize is how much of a file Sniff reads.
const HeadSize = 1 << 20

// sampleRecords is how many records a sample keeps.
const sampleRecords = 16

var sqliteMagic = []byte("SQLite format 3\x00")

// Sniff reads the head of the file at path and describes it. An input
// that is not a regular file (a pipe, /dev/stdin, a process substitution)
// is a stream: it is read as SniffStream reads one.
func Sniff(path string) (*Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // an *os.PathError: "open PATH: why"
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return SniffStream(path, f)
	}
	return sniffFile(path, path, f)
}

// SniffStream reads a stream (standard input, a pipe) that can be read
// only once, while importers read their file by name and some more than
// once (a document whose shape is unusual is read again; a SQLite store
// must be a file). So the stream is copied whole to a temporary file
// first, which Sample.Path names and Sample.Close removes; name is what
// messages call the input.
func SniffStream(name string, r io.Reader) (*Sample, error) {
	tmp, err := os.CreateTemp("", "perch-stdin-*")
	if err != nil {
		return nil, fmt.Errorf("read %s: keep a copy: %w", name, err)
	}
	_, err = io.Copy(tmp, r)
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	defer tmp.Close()
	s, err := sniffFile(tmp.Name(), name, tmp)
	if err != nil {
		os.Remove(tmp.Name())
		return nil, err
	}
	s.spooled = tmp.Name()
	return s, nil
}

// sniffFile samples the head of f, the file at path.
func sniffFile(path, name string, f *os.File) (*Sample, error) {
	head := make([]byte, HeadSize)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err // an *os.PathError: "read PATH: why"
	}
	s := SniffBytes(path, head[:n], n < HeadSize)
	s.Name = name
	return s, nil
}

// SniffBytes describes a file from its head; whole says the head is the
// whole file.
func SniffBytes(path string, head []byte, whole bool) *Sample {
	s := &Sample{Path: path, Name: path}
	if bytes.HasPrefix(head, sqliteMagic) {
		s.Shape = ShapeSQLite
		s.Head = head
		return s
	}
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	s.Head = head
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	if len(trimmed) == 0 {
		return s
	}
	switch {
	case looksLikeSSE(trimmed):
		s.Shape = ShapeSSE
		s.sampleSSE(head)
	case trimmed[0] == '{' || trimmed[0] == '[':
		if isJSONL(trimmed) {
			s.Shape = ShapeJSONL
			s.sampleJSONL(trimmed)
		} else {
			s.Shape = ShapeJSON
			s.sampleJSON(trimmed)
		}
	}
	return s
}

// looksLikeSSE: the first non-comment line is an SSE field.
func looksLikeSSE(b []byte) bool {
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		line = bytes.TrimRight(line, "\r")
		b = rest
		if len(line) == 0 {
			continue
		}
		if line[0] == ':' {
			continue // a comment
		}
		for _, f := range []string{"data:", "event:", "id:", "retry:"} {
			if bytes.HasPrefix(line, []byte(f)) {
				return true
			}
		}
		return false
	}
	return false
}

// isJSONL: the first line is a complete JSON value and more non-blank text
// follows it on a later line.
func isJSONL(b []byte) bool {
	line, rest, found := bytes.Cut(b, []byte("\n"))
	if !found {
		return false
	}
	if !json.Valid(Repair(bytes.TrimSpace(line))) {
		return false
	}
	return len(bytes.TrimSpace(rest)) > 0
}

func (s *Sample) addRecord(raw []byte) {
	if len(s.Records) >= sampleRecords {
		return
	}
	var r Record
	if json.Unmarshal(Repair(bytes.TrimSpace(raw)), &r) == nil && r != nil {
		s.Records = append(s.Records, r)
	}
}

func (s *Sample) sampleSSE(head []byte) {
	_ = sse.ReadFrames(bytes.NewReader(head), func(f events.Frame) error {
		if len(s.Frames) >= sampleRecords {
			return errStop
		}
		s.Frames = append(s.Frames, f)
		s.addRecord(f.Data)
		return nil
	})
}

var errStop = errors.New("enough")

func (s *Sample) sampleJSONL(head []byte) {
	for len(head) > 0 && len(s.Records) < sampleRecords {
		line, rest, found := bytes.Cut(head, []byte("\n"))
		if !found && len(rest) == 0 && len(head) == HeadSize {
			break // a line cut by the head's end
		}
		head = rest
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		s.addRecord(line)
		if !found {
			break
		}
	}
}

// sampleJSON walks the start of a document with a streaming decoder, so a
// head cut in the middle still yields its first records.
func (s *Sample) sampleJSON(head []byte) {
	dec := json.NewDecoder(bytes.NewReader(Repair(head)))
	tok, err := dec.Token()
	if err != nil {
		return
	}
	if d, ok := tok.(json.Delim); ok && d == '[' {
		s.TopArray = true
		for dec.More() && len(s.Records) < sampleRecords {
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return
			}
			s.addRecord(raw)
		}
		return
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return
	}
	s.Top = Record{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return
		}
		key, _ := kt.(string)
		// Look at the value's first token without decoding it whole: big
		// arrays are sampled, not read.
		if s.Field == "" && peekArray(dec) {
			if _, err := dec.Token(); err != nil {
				return
			}
			s.Field = key
			s.Top[key] = json.RawMessage("[]")
			for dec.More() {
				var raw json.RawMessage
				if dec.Decode(&raw) != nil {
					return
				}
				s.addRecord(raw)
				if len(s.Records) >= sampleRecords {
					return
				}
			}
			if _, err := dec.Token(); err != nil {
				return
			}
			continue
		}
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return
		}
		s.Top[key] = raw
	}
}

// peekArray reports whether the next value of dec starts with '['. When
// the decoder's buffer happens to end before the value, it cannot tell and
// says no: the value is then decoded whole, which is correct, only dearer.
func peekArray(dec *json.Decoder) bool {
	rest, _ := io.ReadAll(io.LimitReader(dec.Buffered(), 64))
	b := bytes.TrimLeft(rest, " \t\r\n:")
	return len(b) > 0 && b[0] == '['
}

// Has reports whether a sampled record has all the keys.
func Has(r Record, keys ...string) bool {
	for _, k := range keys {
		if _, ok := r[k]; !ok {
			return false
		}
	}
	return true
}

// Str reads a string field of a record ("" when absent or not a string).
func Str(r Record, key string) string {
	var s string
	if raw, ok := r[key]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// openBuffered opens path for a streaming read.
func openBuffered(path string) (*os.File, *bufio.Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err // an *os.PathError names the path
	}
	return f, bufio.NewReaderSize(f, 1<<20), nil
}
