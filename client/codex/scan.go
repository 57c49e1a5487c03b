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

// readHead reads session_meta and the first prompt the user wrote.
func readHead(path string) (head, error) {
	var h head
	if m := threadID.FindStringSubmatch(filepath.Base(path)); m != nil {
		h.id = m[1]
	}
	f, err := os.Open(path)
	if err != nil {
		return h, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, headLimit), 64<<10)
	for {
		line, err := readLine(r)
		if len(line) > 0 {
			if done := h.line(line); done {
				return h, nil
			}
		}
		if err != nil {
			return h, nil // a head without a prompt yet (or cut by the limit)
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
		var rec struct {
			Type    string `json:"type"`
			Payload struct {
				ID        string `json:"id"`
				Cwd       string `json:"cwd"`
				Timestamp string `json:"timestamp"`
				Model     string `json:"model"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Type != "session_meta" {
			return false
		}
		if rec.Payload.ID != "" {
			h.id = rec.Payload.ID
		}
		h.cwd = rec.Payload.Cwd
		h.model = rec.Payload.Model
		h.created, _ = time.Parse(time.RFC3339Nano, rec.Payload.Timestamp)
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
	var t tail
	f, err := os.Open(path)
	if err != nil {
		return t, err
	}
	defer f.Close()
	end := size
	var carry []byte // the start of a line that began before the chunk
	for end > 0 && size-end < tailLimit && !(t.found && t.usageOK) {
		start := max(end-tailChunk, 0)
		buf := make([]byte, end-start, end-start+int64(len(carry)))
		if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
			return t, err
		}
		buf = append(buf, carry...)
		// The first line of the chunk may be cut: keep it for the next.
		first := 0
		if start > 0 {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				carry, end = buf, start
				continue
			}
			first = i + 1
			carry = append([]byte(nil), buf[:first]...)
		}
		lines := bytes.Split(bytes.TrimRight(buf[first:], "\n"), []byte("\n"))
		for i := len(lines) - 1; i >= 0 && !(t.found && t.usageOK); i-- {
			t.line(lines[i])
		}
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

// wholeTotal reads a whole rollout for its last running total, for one
// whose tail has none (a long last turn of huge lines): only the lines
// that can hold one are parsed.
func wholeTotal(path string) (*events.Usage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var last *events.Usage
	for {
		line, err := readLine(r)
		if bytes.Contains(line, []byte(`"token_count"`)) {
			var t tail
			t.line(bytes.TrimRight(line, "\n"))
			if t.usageOK {
				last = t.usage
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return last, nil
			}
			return last, err
		}
	}
}
