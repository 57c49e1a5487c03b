package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// Importer reads OpenAI Chat Completions files.
func Importer() ingest.Importer {
	return ingest.Importer{
		Name: "openai",
		Expects: "Chat Completions: a request or response JSON, a log of them (JSON array or JSON lines), " +
			"or a recorded chunk stream (data: lines, or the chunks as JSON lines)",
		Detect: detect,
		Import: importFile,
	}
}

func importFile(ctx context.Context, s *ingest.Sample, _ ingest.Options, emit func(events.Event)) error {
	return decodeFile(ctx, s, NewDecoder(), emit)
}

// decodeFile streams the file at s through d.
func decodeFile(ctx context.Context, s *ingest.Sample, d *Decoder, emit func(events.Event)) error {
	put := func(evs []events.Event) {
		for _, ev := range evs {
			emit(ev)
		}
	}
	var err error
	switch s.Shape {
	case ingest.ShapeSSE:
		err = ingest.EachLine(s.Path, func(line int, raw []byte) error {
			put(d.DecodeLine("line "+strconv.Itoa(line), raw))
			return ctx.Err()
		})
	case ingest.ShapeJSONL:
		err = ingest.EachLine(s.Path, func(line int, raw []byte) error {
			put(d.Decode("line "+strconv.Itoa(line), raw))
			return ctx.Err()
		})
	case ingest.ShapeJSON:
		err = importDocument(ctx, s, d, put)
	default:
		return fmt.Errorf("an OpenAI file is a JSON document, JSON lines or a recorded stream, not %s", s.Shape)
	}
	put(d.Flush())
	return err
}

// DecodeLine reads one line of a recorded stream: `data: <chunk>`,
// `data: [DONE]`; event names, ids and comments carry nothing. A line
// that is a bare JSON object is read as a record.
func (d *Decoder) DecodeLine(pos string, line []byte) []events.Event {
	line = bytes.TrimSpace(line)
	switch {
	case len(line) == 0, line[0] == ':':
		return nil
	case bytes.HasPrefix(line, []byte("data:")):
		payload := bytes.TrimSpace(line[len("data:"):])
		if len(payload) == 0 {
			return nil
		}
		return d.Decode(pos, payload)
	case line[0] == '{' || line[0] == '[':
		return d.Decode(pos, line)
	}
	for _, f := range []string{"event:", "id:", "retry:"} {
		if bytes.HasPrefix(line, []byte(f)) {
			return nil
		}
	}
	return []events.Event{bad(pos, line, "not a line of an event stream")}
}

// importDocument reads one JSON document: an array of records, a request
// (its messages streamed one by one), a response, or any other record.
func importDocument(ctx context.Context, s *ingest.Sample, d *Decoder, put func([]events.Event)) error {
	n := 0
	each := func(field, unit string, fn func(string, json.RawMessage)) (ingest.Record, error) {
		top, err := ingest.EachElement(s.Path, field, func(i int, raw json.RawMessage) error {
			n = i + 1
			fn(unit+" "+strconv.Itoa(i+1), raw)
			return ctx.Err()
		})
		if err != nil && ctx.Err() == nil {
			// A document cut short: keep what was read, say where it broke.
			put([]events.Event{notice(events.LevelWarning, events.NoticeError, fmt.Sprintf(
				"the document breaks off after %s %d: %v", unit, n, err))})
			err = nil
		}
		return top, err
	}
	decode := func(pos string, raw json.RawMessage) { put(d.Decode(pos, raw)) }
	top := s.Top
	switch {
	case s.TopArray:
		_, err := each("", "element", decode)
		return err
	case has(top, "choices") || s.Field == "choices":
		// A response: one message, read whole.
		var choices []json.RawMessage
		rest, err := each("choices", "choice", func(_ string, raw json.RawMessage) {
			choices = append(choices, raw)
		})
		if err != nil {
			return err
		}
		if rest == nil {
			rest = ingest.Record{}
		}
		rest["choices"], _ = json.Marshal(choices)
		raw, _ := json.Marshal(rest)
		put(d.Decode("document", raw))
		return nil
	case has(top, "messages") || s.Field == "messages":
		// A request: its messages one at a time, in order.
		rest, err := each("messages", "message", decode)
		if err == nil && n == 0 && rest != nil && !normalize.IsNull(rest["messages"]) && normalize.AsList(rest["messages"]) == nil {
			put([]events.Event{bad("request", rest["messages"], "messages is not a list")})
		}
		return err
	}
	rest, err := each("\x00", "element", decode) // no such field: the whole object
	if err != nil || rest == nil {
		return err
	}
	raw, _ := json.Marshal(rest)
	put(d.Decode("document", raw))
	return nil
}

// detect recognises Chat Completions traffic by its own keys: "choices"
// with deltas or messages, object "chat.completion(.chunk)", OpenAI-only
// message features (tool_calls, role "tool" with tool_call_id,
// function_call, role "developer", image_url parts, refusal,
// reasoning_content) or request options. A bare {"messages":[{role,
// content}]} could be any provider's: it scores low. Records with a
// "type" discriminator belong to other systems (Anthropic events and
// messages, agent CLIs) and score nothing.
func detect(s *ingest.Sample) int {
	best := 0
	consider := func(n int) {
		if n > best {
			best = n
		}
	}
	for _, r := range s.Records {
		if s.Field == "" || s.Shape != ingest.ShapeJSON {
			consider(scoreRecord(r))
		}
	}
	switch s.Shape {
	case ingest.ShapeSSE:
		// The data lines themselves: frames written without blank lines
		// between them hold several, and a recording whose last frame
		// lacks its blank line yields no frame at all.
		head, n := s.Head, 0
		for len(head) > 0 && n < 64 {
			var line []byte
			line, head, _ = bytes.Cut(head, []byte("\n"))
			if p, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:")); ok {
				n++
				if o := normalize.AsObject(ingest.Repair(bytes.TrimSpace(p))); o != nil {
					consider(scoreRecord(o))
				}
			}
		}
	case ingest.ShapeJSON:
		if s.Top != nil {
			consider(scoreTop(s))
		}
	}
	return best
}

func scoreTop(s *ingest.Sample) int {
	top := s.Top
	if foreign(top) {
		return 0
	}
	switch normalize.StrField(top, "object") {
	case "chat.completion", "chat.completion.chunk":
		return 95
	}
	if has(top, "choices") {
		choices := normalize.AsList(top["choices"])
		if s.Field == "choices" {
			choices = nil
			for _, r := range s.Records {
				b, _ := json.Marshal(r)
				choices = append(choices, b)
			}
		}
		return scoreChoices(choices)
	}
	if has(top, "messages") {
		msgs := normalize.AsList(top["messages"])
		if s.Field == "messages" {
			msgs = nil
			for _, r := range s.Records {
				b, _ := json.Marshal(r)
				msgs = append(msgs, b)
			}
		}
		return scoreMessages(msgs, top, s)
	}
	return scoreRecord(top)
}

// foreign: keys that other systems' records carry and Chat Completions
// records never do.
func foreign(r ingest.Record) bool {
	for _, k := range []string{"type", "msg", "desc", "chat_jid", "thread_id", "submissionId", "_type", "sender_name", "event"} {
		if has(r, k) {
			return true
		}
	}
	return false
}

func scoreRecord(r ingest.Record) int {
	if r == nil || foreign(r) {
		return 0
	}
	switch normalize.StrField(r, "object") {
	case "chat.completion", "chat.completion.chunk":
		return 95
	}
	switch {
	case has(r, "choices"):
		return scoreChoices(normalize.AsList(r["choices"]))
	case has(r, "messages"):
		return scoreMessages(normalize.AsList(r["messages"]), r, nil)
	case has(r, "request") || has(r, "response"):
		return max(scoreRecord(normalize.AsObject(r["request"])), scoreRecord(normalize.AsObject(r["response"])))
	case has(r, "role"):
		return scoreMessages([]json.RawMessage{mustJSON(r)}, nil, nil) / 2
	}
	return 0
}

func mustJSON(r ingest.Record) json.RawMessage {
	b, _ := json.Marshal(r)
	return b
}

func scoreChoices(choices []json.RawMessage) int {
	for _, c := range choices {
		co := normalize.AsObject(c)
		if has(co, "delta") || has(co, "message") || has(co, "finish_reason") {
			return 90
		}
	}
	return 0
}

// requestOptions are request keys of Chat Completions that Anthropic's
// Messages API does not have.
var requestOptions = []string{"max_completion_tokens", "response_format", "stream_options", "reasoning_effort",
	"logit_bias", "logprobs", "n", "presence_penalty", "frequency_penalty", "parallel_tool_calls", "functions"}

// scoreMessages scores a request's messages and its other keys (top); s is
// the sample when top is the document's (its tools may be the sampled
// records).
func scoreMessages(msgs []json.RawMessage, top ingest.Record, s *ingest.Sample) int {
	oai, anth, any := false, false, false
	if top != nil {
		if has(top, "system") || has(top, "anthropic_version") {
			anth = true
		}
		for _, k := range requestOptions {
			oai = oai || has(top, k)
		}
		for _, t := range normalize.AsList(top["tools"]) {
			oai = oai || has(normalize.AsObject(t), "function")
		}
		if s != nil && s.Field == "tools" {
			for _, t := range s.Records {
				oai = oai || has(t, "function")
			}
		}
	}
	for _, raw := range msgs {
		m := normalize.AsObject(raw)
		role := normalize.StrField(m, "role")
		if role == "" || has(m, "type") {
			continue
		}
		any = true
		switch role {
		case "developer", "function":
			oai = true
		case "tool":
			oai = oai || has(m, "tool_call_id")
		}
		for _, k := range []string{"tool_calls", "function_call", "refusal", "reasoning_content", "tool_call_id"} {
			oai = oai || has(m, k)
		}
		for _, p := range normalize.AsList(m["content"]) {
			switch normalize.StrField(normalize.AsObject(p), "type") {
			case "image_url", "input_audio", "refusal":
				oai = true
			case "tool_use", "tool_result", "thinking", "redacted_thinking", "document", "image":
				anth = true
			}
		}
	}
	switch {
	case oai && anth:
		return 30
	case oai:
		return 75
	case anth, !any:
		return 0
	}
	return 20 // role/content only: any provider's
}
