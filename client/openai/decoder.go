// Package openai reads OpenAI Chat Completions traffic from files: request
// and response documents (one, or a log of them), and recorded chunk
// streams (`data: {chunk}` lines, or the chunks as JSON lines). See
// docs/formats/openai.md for the shapes and how they map.
package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/idset"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/internal/jsonx"
	"github.com/perch-tui/perch/internal/recent"
)

// Decoder turns Chat Completions records into normalized events. It keeps
// nothing of a record's bytes (its objects are split in place), so records
// may sit in a reused buffer. It is stateful: it assembles streamed responses chunk by chunk, pairs tool
// results with their calls, and remembers the conversation shown so far so
// that a log of requests, each repeating the history before it, shows every
// turn once. Feed it records in file order, then call Flush.
type Decoder struct {
	// Live makes the decoder report streamed text and reasoning as it
	// grows (delta events), as a live view wants. A file import leaves it
	// off and gets each streamed response whole when it ends.
	Live bool

	stream *stream // the streamed response being assembled, nil when none

	hist []uint64 // fingerprints of the conversation shown so far
	// names are the tool names of the latest calls, by call id, for their
	// results (which come soon after, in the next request).
	names *recent.Map[string]
	// pending are the synthesized ids of legacy function calls waiting
	// for their result, oldest first.
	pending []pendingCall
	used    idset.Set // turn and message ids given out, in the whole file
	msgs    int       // messages given a synthesized id
	resps   int       // responses without an id
}

type pendingCall struct{ id, name string }

// NewDecoder returns a decoder at the start of a file.
func NewDecoder() *Decoder {
	return &Decoder{names: recent.New[string](recent.Window)}
}

// Decode reads one record: a chunk, `[DONE]`, a response, a request, a log
// entry {"request","response"}, a bare message, or an array of those. pos
// names the record's place in the file for notices ("line 12").
func (d *Decoder) Decode(pos string, raw []byte) []events.Event {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "[DONE]" {
		return d.endStream(true)
	}
	if len(raw) > 0 && raw[0] == '[' {
		l := normalize.AsListShared(raw)
		if l == nil {
			return []events.Event{bad(pos, raw, "not JSON")}
		}
		var out []events.Event
		for i, r := range l {
			out = append(out, d.Decode(pos+", element "+strconv.Itoa(i+1), r)...)
		}
		return out
	}
	o := normalize.AsObjectShared(raw)
	if o == nil {
		why := "not a JSON object"
		if !jsonx.Valid(raw) {
			why = "not JSON"
		}
		return []events.Event{bad(pos, raw, why)}
	}
	return d.record(pos, raw, o)
}

func (d *Decoder) record(pos string, raw []byte, o normalize.Object) []events.Event {
	switch {
	case isChunk(o, d.stream != nil):
		return d.chunk(pos, o)
	case has(o, "choices"):
		out := d.endStream(false)
		return append(out, d.response(pos, o)...)
	case has(o, "messages"):
		out := d.endStream(false)
		return append(out, d.request(pos, o)...)
	case has(o, "request") || has(o, "response"):
		return d.logEntry(pos, o)
	case has(o, "role"):
		out := d.endStream(false)
		return append(out, d.bareMessage(pos, o)...)
	case has(o, "error"):
		return []events.Event{apiError(pos, o["error"])}
	}
	return []events.Event{notice(events.LevelInfo, events.NoticeInfo,
		ingest.BadRecord(pos, raw, "not a Chat Completions record, shown as is"))}
}

// logEntry is {"request": {…}, "response": {…}} as API loggers write it;
// the response may be a chunk list.
func (d *Decoder) logEntry(pos string, o normalize.Object) []events.Event {
	out := d.endStream(false)
	if r := o["request"]; !normalize.IsNull(r) {
		out = append(out, d.Decode(pos+", request", r)...)
	}
	if r := o["response"]; !normalize.IsNull(r) {
		out = append(out, d.Decode(pos+", response", r)...)
		out = append(out, d.endStream(false)...)
	}
	return out
}

// Flush ends the file: a response still being streamed is finished as it
// stands and marked incomplete.
func (d *Decoder) Flush() []events.Event {
	return d.endStream(false)
}

// turnID gives out a turn id once: the source's id, or response-N.
func (d *Decoder) turnID(src string) string {
	id := src
	if id == "" {
		d.resps++
		id = "response-" + strconv.Itoa(d.resps)
	}
	base := id
	for n := 2; d.used.Has(id); n++ {
		id = fmt.Sprintf("%s#%d", base, n)
	}
	d.used.Add(id)
	return id
}

// msgID synthesizes the id of a message that has none.
func (d *Decoder) msgID() string {
	for {
		d.msgs++
		id := "msg-" + strconv.Itoa(d.msgs)
		if !d.used.Seen(id) {
			return id
		}
	}
}

func has(o normalize.Object, key string) bool {
	_, ok := o[key]
	return ok
}

func notice(level events.NoticeLevel, kind, text string) events.Event {
	return events.Event{Kind: events.KindNotice, Level: level, NoticeKind: kind, Text: text}
}

func bad(pos string, raw []byte, why string) events.Event {
	return notice(events.LevelWarning, events.NoticeError, ingest.BadRecord(pos, raw, why))
}

// apiError is an error body ({"error": {"message", "type", "code"}} or a
// string) sent instead of, or in the middle of, a response.
func apiError(pos string, raw json.RawMessage) events.Event {
	msg := normalize.Str(raw)
	if o := normalize.AsObjectShared(raw); o != nil {
		msg = normalize.FirstStr(o, "message", "error", "type", "code")
		if msg == "" {
			msg = normalize.Excerpt(raw)
		}
	} else if msg == "" {
		msg = normalize.Excerpt(raw)
	}
	return notice(events.LevelError, events.NoticeError, pos+": the API reported an error: "+msg)
}
