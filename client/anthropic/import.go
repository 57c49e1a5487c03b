package anthropic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/sse"
)

// Importer reads Messages API files: a request body, a response, a log of
// them (a JSON array or JSON lines), or a recorded event stream (SSE, or
// its events as JSON lines).
func Importer() ingest.Importer {
	return ingest.Importer{
		Name:    "anthropic",
		Expects: "Anthropic Messages API JSON (a request, a response, or an array / JSON lines of them) or a recorded stream (.sse, or its events as JSON lines)",
		Detect:  detect,
		Import:  importFile,
	}
}

func detect(s *ingest.Sample) int {
	switch s.Shape {
	case ingest.ShapeSSE:
		for _, f := range s.Frames {
			typ := f.Name
			if o := normalize.AsObject(f.Data); o != nil && normalize.StrField(o, "type") != "" {
				typ = normalize.StrField(o, "type")
			}
			if IsStreamEvent(typ) && typ != "ping" && typ != "error" {
				return 90
			}
		}
		return 0
	case ingest.ShapeJSONL:
		return recordsScore(s.Records)
	case ingest.ShapeJSON:
		if s.TopArray {
			return recordsScore(s.Records)
		}
		return topScore(s)
	}
	return 0
}

// recordsScore scores the records of a log or of a stream as JSON lines.
func recordsScore(recs []ingest.Record) int {
	best := 0
	for _, r := range recs {
		n := 0
		typ := ingest.Str(r, "type")
		switch {
		case IsStreamEvent(typ) && typ != "ping" && typ != "error":
			n = 85
		case IsResponse(r):
			n = 85
		case IsRequest(r):
			n = requestScore(r, normalize.AsList(r["messages"]))
		case isMessage(r) && distinctive(r):
			n = 80
		case ingest.Has(r, "request") || ingest.Has(r, "response"):
			if o := normalize.AsObject(r["response"]); o != nil && IsResponse(o) {
				n = 80
			} else if o := normalize.AsObject(r["request"]); o != nil && IsRequest(o) {
				n = requestScore(o, normalize.AsList(o["messages"]))
			}
		}
		if n > best {
			best = n
		}
	}
	return best
}

// isMessage: a bare message of a conversation log ({"role","content"}).
func isMessage(r ingest.Record) bool {
	return ingest.Has(r, "role") && ingest.Has(r, "content") && ingest.Str(r, "type") == ""
}

// distinctive: fields only Anthropic's API writes, a message id ("msg_…")
// or cache counts in the usage. They name the system however many blocks
// of the message perch does not know (those are shown as such): a block
// type is no reason to pick a poorer reading.
func distinctive(r ingest.Record) bool {
	if strings.HasPrefix(ingest.Str(r, "id"), "msg_") {
		return true
	}
	u := normalize.AsObject(r["usage"])
	return ingest.Has(u, "cache_read_input_tokens") || ingest.Has(u, "cache_creation_input_tokens")
}

func topScore(s *ingest.Sample) int {
	top := s.Top
	if top == nil {
		return 0
	}
	if IsResponse(top) {
		return 90
	}
	if IsError(top) {
		e := normalize.AsObject(top["error"])
		if strings.HasSuffix(normalize.StrField(e, "type"), "_error") {
			return 40
		}
		return 0
	}
	if ingest.Has(top, "request") || ingest.Has(top, "response") {
		return recordsScore([]ingest.Record{top})
	}
	var msgs []json.RawMessage
	switch {
	case s.Field == "messages":
		for _, r := range s.Records {
			b, _ := json.Marshal(r)
			msgs = append(msgs, b)
		}
	case ingest.Has(top, "messages"):
		msgs = normalize.AsList(top["messages"])
	case bytes.Contains(s.Head, []byte(`"messages"`)):
		// The messages lie past the sampled head.
	default:
		return 0
	}
	return requestScore(top, msgs)
}

// requestScore: how surely a {"model","messages"} body is Anthropic's and
// not another chat API's. Roles or keys only other APIs use rule it out.
func requestScore(top ingest.Record, msgs []json.RawMessage) int {
	marks := 0
	if _, ok := top["system"]; ok {
		marks++
	}
	if strings.HasPrefix(strings.ToLower(ingest.Str(top, "model")), "claude") {
		marks++
	}
	if _, ok := top["anthropic_version"]; ok {
		marks++
	}
	for _, m := range msgs {
		o := normalize.AsObject(m)
		if _, ok := o["role"]; !ok {
			return 0 // not a chat message: another system's rows
		}
		switch normalize.StrField(o, "role") {
		case "system", "developer", "tool", "function":
			return 0 // OpenAI's roles
		}
		for _, k := range []string{"tool_calls", "tool_call_id", "function_call", "name"} {
			if _, ok := o[k]; ok {
				return 0
			}
		}
		for _, b := range normalize.AsList(o["content"]) {
			bo := normalize.AsObject(b)
			switch normalize.StrField(bo, "type") {
			case "tool_use", "tool_result", "thinking", "redacted_thinking":
				marks++
			case "image", "document":
				if _, ok := bo["source"]; ok {
					marks++
				}
			case "image_url", "input_text", "input_image":
				return 0
			}
		}
	}
	_, hasMax := top["max_tokens"]
	_, hasModel := top["model"]
	switch {
	case marks > 0:
		return 75
	case hasMax:
		return 30
	case hasModel:
		return 15
	}
	return 0
}

func importFile(ctx context.Context, s *ingest.Sample, _ ingest.Options, emit func(events.Event)) error {
	emitAll := func(evs []events.Event) {
		for _, ev := range evs {
			emit(ev)
		}
	}
	stream := NewDecoder()
	conv := NewConversation()
	// record reads one JSON document of a log: a stream event or a
	// request, response, pair or message.
	record := func(pos string, raw []byte) {
		o, why := Object(raw)
		if o == nil {
			emitAll([]events.Event{BadRecord(pos, raw, why)})
			return
		}
		if IsStreamEvent(normalize.StrField(o, "type")) && !IsError(o) || stream.Open() && IsError(o) {
			emitAll(stream.DecodeObject(pos, o))
			return
		}
		if stream.Open() {
			emitAll(stream.Flush())
		}
		emitAll(conv.DecodeObject(pos, o))
	}
	switch s.Shape {
	case ingest.ShapeSSE:
		n := 0
		err := ingest.EachFrame(s.Path, func(f events.Frame) error {
			n++
			emitAll(stream.DecodeFrame("frame "+strconv.Itoa(n), f))
			return ctx.Err()
		})
		if errors.Is(err, sse.ErrTruncated) {
			emit(Notice(events.LevelWarning, events.NoticeInfo,
				fmt.Sprintf("The recording ends inside frame %d; that frame is left out.", n+1)))
			err = nil
		}
		emitAll(stream.Flush())
		return err
	case ingest.ShapeJSONL:
		err := ingest.EachLine(s.Path, func(line int, raw []byte) error {
			record("line "+strconv.Itoa(line), raw)
			return ctx.Err()
		})
		emitAll(stream.Flush())
		return err
	case ingest.ShapeJSON:
		if s.TopArray {
			_, err := ingest.EachElement(s.Path, "", func(i int, raw json.RawMessage) error {
				record("element "+strconv.Itoa(i+1), raw)
				return ctx.Err()
			})
			emitAll(stream.Flush())
			return err
		}
		if IsResponse(s.Top) || IsError(s.Top) || ingest.Has(s.Top, "request") || ingest.Has(s.Top, "response") {
			raw, err := readDocument(s.Path)
			if err != nil {
				return err
			}
			emitAll(conv.DecodeAt("", raw))
			return nil
		}
		return walkRequest(ctx, s.Path, conv, emitAll)
	}
	return fmt.Errorf("an Anthropic file is JSON, JSON lines or an SSE recording, not %s", s.Shape)
}

// readDocument reads a whole JSON document (one response: a single turn,
// which is in memory whole anyway).
func readDocument(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return ingest.Repair(bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))), nil
}

// walkRequest streams a request body in its own key order: the system
// prompt is shown where it stands, and the messages one at a time, so a
// request of any size is never held whole.
func walkRequest(ctx context.Context, path string, conv *Conversation, emit func([]events.Event)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	if b, _ := r.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		_, _ = r.Discard(3)
	}
	dec := json.NewDecoder(ingest.NewRepairReader(r))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("%s: not a JSON object", path)
	}
	found := false
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return fmt.Errorf("read request: %w", err)
		}
		key, _ := kt.(string)
		if key != "messages" {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return fmt.Errorf("read %q: %w", key, err)
			}
			if key == "system" {
				emit(conv.System(raw))
			}
			continue
		}
		found = true
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("read messages: %w", err)
		}
		if tok != json.Delim('[') {
			emit([]events.Event{Notice(events.LevelWarning, events.NoticeError,
				fmt.Sprintf("messages is not a list (%v)", tok))})
			if err := skipRest(dec, tok); err != nil {
				return err
			}
			continue
		}
		for i := 1; dec.More(); i++ {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
			pos := "message " + strconv.Itoa(i)
			if o, why := Object(raw); o == nil {
				emit([]events.Event{BadRecord(pos, raw, why)})
			} else {
				emit(conv.Message(pos, o))
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return fmt.Errorf("read messages end: %w", err)
		}
	}
	if !found {
		emit([]events.Event{Notice(events.LevelWarning, events.NoticeError,
			"this JSON object is neither a request (no messages), a response nor an error")})
	}
	return nil
}

// skipRest skips the rest of a value whose first token was tok.
func skipRest(dec *json.Decoder, tok json.Token) error {
	depth := 0
	if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') {
		depth = 1
	}
	for depth > 0 {
		t, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read document: %w", err)
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
		}
	}
	return nil
}
