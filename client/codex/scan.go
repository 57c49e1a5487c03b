package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
)

// Listing reads a rollout's head and tail, never the whole file: the
// head (session_meta, the first prompt) says what the session is, the
// tail (its last turn event, its last running total) where it stands.

const (
	headLimit = 512 << 10 // the most of a head read for the first prompt
	tailChunk = 64 << 10  // the tail is read backwards in chunks of this
	tailLimit = 1 << 20   // and no further than this from the end
)

// head is what a rollout's first lines say.
type head struct {
	id, cwd, model, title string
	created               time.Time
}

// threadID reads the thread id off a rollout's name,
// rollout-<time>-<thread id>.jsonl.
var threadID = regexp.MustCompile(`([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$`)

// scanner holds the buffers the reads of one listing share: a listing
// reads thousands of files, and a buffer each would be as many again in
// garbage.
type scanner struct {
	r   *bufio.Reader
	buf []byte
}

func newScanner() *scanner {
	return &scanner{r: bufio.NewReaderSize(nil, 64<<10), buf: make([]byte, 0, 2*tailChunk)}
}

// readHead reads session_meta and the first prompt the user wrote.
func readHead(path string) (head, error) {
	f, err := os.Open(path)
	if err != nil {
		return head{}, err
	}
	defer f.Close()
	return newScanner().head(path, f), nil
}

func (sc *scanner) head(path string, f io.ReaderAt) head {
	var h head
	if m := threadID.FindStringSubmatch(filepath.Base(path)); m != nil {
		h.id = m[1]
	}
	r := sc.r
	r.Reset(io.NewSectionReader(f, 0, headLimit))
	defer r.Reset(nil)
	for {
		line, err := readLine(r)
		if len(line) > 0 {
			if done := h.line(line); done {
				return h
			}
		}
		if err != nil {
			return h // a head without a prompt yet (or cut by the limit)
		}
	}
}

// readLine reads a whole line however long, up to the reader's limit.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	buf := append([]byte(nil), line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = r.ReadSlice('\n')
		buf = append(buf, line...)
	}
	return buf, err
}

// line takes one head line; it says whether the head is complete.
func (h *head) line(line []byte) bool {
	switch {
	case bytes.Contains(line, []byte(`"session_meta"`)) && h.cwd == "":
		h.meta(line)
	case bytes.Contains(line, []byte(`"turn_context"`)) && h.model == "":
		var rec struct {
			Type    string `json:"type"`
			Payload struct {
				Model string `json:"model"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Type == "turn_context" {
			h.model = rec.Payload.Model
		}
	case bytes.Contains(line, []byte(`"user"`)) && bytes.Contains(line, []byte(`"response_item"`)):
		o := normalize.AsObjectShared(line)
		p := normalize.AsObjectShared(o["payload"])
		if normalize.StrField(o, "type") != "response_item" || normalize.StrField(p, "type") != "message" ||
			normalize.StrField(p, "role") != "user" {
			return false
		}
		text := partsText(p["content"])
		if harness(p, text) || strings.TrimSpace(text) == "" {
			return false
		}
		h.title = title(text)
		return true
	}
	return false
}

// meta reads session_meta's id, cwd, time and model. The line is long
// (it holds Codex's whole instructions, tens of KB, after these fields):
// its tokens are read only until the fields are found.
func (h *head) meta(line []byte) {
	dec := json.NewDecoder(bytes.NewReader(line))
	isMeta := false
	var id, cwd, ts, model string
	ok := walkObject(dec, func(key string) (bool, bool) {
		switch key {
		case "type":
			var typ string
			if dec.Decode(&typ) != nil {
				return false, false
			}
			isMeta = typ == "session_meta"
			return true, true
		case "payload":
			walkObject(dec, func(key string) (bool, bool) {
				var dst *string
				switch key {
				case "id":
					dst = &id
				case "cwd":
					dst = &cwd
				case "timestamp":
					dst = &ts
				case "model":
					dst = &model
				default:
					var skip json.RawMessage
					return dec.Decode(&skip) == nil, true
				}
				if dec.Decode(dst) != nil {
					return false, false
				}
				return true, id == "" || cwd == "" || ts == "" // the rest is not needed
			})
			return true, false
		}
		var skip json.RawMessage
		return dec.Decode(&skip) == nil, true
	})
	if !ok || !isMeta && !bytes.Contains(line, []byte(`"type":"session_meta"`)) {
		return
	}
	if id != "" {
		h.id = id
	}
	h.cwd, h.model = cwd, model
	h.created, _ = time.Parse(time.RFC3339Nano, ts)
}

// walkObject reads an object's keys, calling each to read its value; each
// says whether it read it and whether to go on. It says whether the
// object began as one.
func walkObject(dec *json.Decoder, each func(key string) (ok, more bool)) bool {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return true
		}
		key, _ := tok.(string)
		ok, more := each(key)
		if !ok || !more {
			return true
		}
	}
	return true
}

// title is a prompt's first line, bounded.
func title(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if r := []rune(line); len(r) > 120 {
		line = string(r[:120]) + "…"
	}
	return line
}

// tail is where a rollout stands, from its last lines.
type tail struct {
	inTurn  bool          // the last turn event is a start: a turn runs (or was cut off)
	usage   *events.Usage // the thread's last running total
	found   bool          // a turn event was found
	usageOK bool          // a running total was found
}

// readTail reads the rollout backwards from its end until it finds its
// last turn event and its last running total, at most tailLimit bytes.
func readTail(path string, size int64) (tail, error) {
	f, err := os.Open(path)
	if err != nil {
		return tail{}, err
	}
	defer f.Close()
	return newScanner().tail(f, size)
}

func (sc *scanner) tail(f io.ReaderAt, size int64) (tail, error) {
	var t tail
	end := size
	var carry []byte // the start of a line that began before the chunk
	for end > 0 && size-end < tailLimit && !(t.found && t.usageOK) {
		start := max(end-tailChunk, 0)
		buf := sc.buf[:0]
		if need := int(end-start) + len(carry); cap(buf) < need {
			buf = make([]byte, 0, need)
			sc.buf = buf
		}
		buf = buf[:end-start]
		if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
			return t, err
		}
		buf = append(buf, carry...)
		// The first line of the chunk may be cut: it is read with the
		// next chunk.
		first := 0
		if start > 0 {
			first = bytes.IndexByte(buf, '\n') + 1
			if first == 0 {
				carry, end = append(carry[:0:0], buf...), start
				continue
			}
		}
		rest := bytes.TrimRight(buf[first:], "\n")
		for len(rest) > 0 && !(t.found && t.usageOK) {
			i := bytes.LastIndexByte(rest, '\n')
			t.line(rest[i+1:])
			rest = rest[:max(i, 0)]
		}
		if t.found && t.usageOK {
			break
		}
		carry = append(carry[:0:0], buf[:first]...) // copied: buf is read into again
		end = start
	}
	return t, nil
}

// line takes one tail line, last first.
func (t *tail) line(line []byte) {
	if !bytes.Contains(line, []byte(`"event_msg"`)) {
		return
	}
	isCount := bytes.Contains(line, []byte(`"token_count"`))
	isTurn := bytes.Contains(line, []byte(`"task_`)) || bytes.Contains(line, []byte(`"turn_`))
	if (!isCount || t.usageOK) && (!isTurn || t.found) {
		return
	}
	o := normalize.AsObjectShared(line)
	p := normalize.AsObjectShared(o["payload"])
	switch normalize.StrField(p, "type") {
	case "task_started", "turn_started":
		if !t.found {
			t.found, t.inTurn = true, true
		}
	case "task_complete", "turn_complete", "turn_aborted":
		if !t.found {
			t.found = true
		}
	case "token_count":
		if info := normalize.AsObjectShared(p["info"]); info != nil && !t.usageOK {
			if u := usage(info["total_token_usage"]); u != nil {
				t.usage, t.usageOK = u, true
			}
		}
	}
}
