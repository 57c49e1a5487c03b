package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
)

// stream is a response being assembled from its chunks.
type stream struct {
	id     string // turn id
	src    string // the chunks' id as sent
	text   strings.Builder
	think  strings.Builder
	calls  []*callBuf
	finish string
	usage  *events.Usage
	others map[int64]bool // indexes of choices other than the first
}

// callBuf is one streamed tool call, keyed by its index.
type callBuf struct {
	index    int64
	hasIndex bool
	legacy   bool // delta.function_call
	id, name string
	args     strings.Builder
	last     string // the last argument fragment
	frags    int
}

// isChunk: a streamed chunk rather than a whole response. open says a
// stream is being assembled (a chunk with no choices then carries its
// usage).
func isChunk(o normalize.Object, open bool) bool {
	switch normalize.StrField(o, "object") {
	case "chat.completion.chunk":
		return true
	case "chat.completion":
		return false
	}
	choices, ok := o["choices"]
	if !ok {
		return false
	}
	l := normalize.AsListShared(choices)
	for _, c := range l {
		if co := normalize.AsObjectShared(c); co != nil {
			if has(co, "delta") {
				return true
			}
			if has(co, "message") {
				return false
			}
		}
	}
	return open && len(l) == 0
}

// chunk adds a chunk to the open stream (opening one), and returns the
// text and reasoning deltas it carries.
func (d *Decoder) chunk(pos string, o normalize.Object) []events.Event {
	var out []events.Event
	src := normalize.StrField(o, "id")
	if s := d.stream; s != nil && s.finish != "" && src != "" && s.src != "" && src != s.src {
		// A new response begins without a [DONE] between them. (Chunks
		// of an unfinished response whose ids differ stay one turn: some
		// servers number every chunk.)
		out = append(out, d.endStream(false)...)
	}
	s := d.stream
	if s == nil {
		s = &stream{src: src, id: d.turnID(src), others: map[int64]bool{}}
		d.stream = s
		// Open the turn here, so that it stands where it began; its final
		// form comes when the response ends.
		out = append(out, events.Event{Kind: events.KindTextDelta, ID: s.id})
	}
	if s.src == "" {
		s.src = src
	}
	for i, c := range normalize.AsListShared(o["choices"]) {
		co := normalize.AsObjectShared(c)
		if co == nil {
			out = append(out, bad(pos, c, "a choice that is not an object"))
			continue
		}
		idx, ok := normalize.Int(co["index"])
		if !ok {
			idx = int64(i)
		}
		if idx != 0 {
			s.others[idx] = true
			continue
		}
		out = append(out, s.delta(normalize.AsObjectShared(co["delta"]), d.Live)...)
		if f := normalize.StrField(co, "finish_reason"); f != "" {
			s.finish = f
		}
	}
	if u := normalize.Usage(o["usage"]); u != nil {
		s.usage = u // the last report wins: some servers repeat a running total
	}
	if e, ok := o["error"]; ok && !normalize.IsNull(e) {
		out = append(out, apiError(pos, e))
	}
	return out
}

func (s *stream) delta(dl normalize.Object, live bool) []events.Event {
	if dl == nil {
		return nil
	}
	var out []events.Event
	c := normalize.ParseContent(dl["content"])
	th := normalize.FirstStr(dl, "reasoning_content", "reasoning")
	if th == "" {
		th = normalize.ParseContent(dl["reasoning_details"]).Thinking
	}
	th += c.Thinking
	s.think.WriteString(th)
	text := c.Text + normalize.StrField(dl, "refusal")
	s.text.WriteString(text)
	if live && th != "" {
		out = append(out, events.Event{Kind: events.KindThinkingDelta, ID: s.id, Thinking: th})
	}
	if live && text != "" {
		out = append(out, events.Event{Kind: events.KindTextDelta, ID: s.id, Text: text})
	}
	for _, raw := range normalize.AsListShared(dl["tool_calls"]) {
		if o := normalize.AsObjectShared(raw); o != nil {
			s.toolDelta(o, normalize.AsObjectShared(o["function"]), false)
		}
	}
	if fc := normalize.AsObjectShared(dl["function_call"]); fc != nil {
		s.toolDelta(fc, fc, true)
	}
	return out
}

// toolDelta adds a tool-call fragment: calls are keyed by index (the id
// and name come only with the first fragment); without an index, by id;
// without either, the fragment continues the last call.
func (s *stream) toolDelta(o, fn normalize.Object, legacy bool) {
	idx, hasIdx := normalize.Int(o["index"])
	id := normalize.StrField(o, "id")
	if legacy {
		hasIdx, id = false, ""
	}
	var cb *callBuf
	for i := len(s.calls) - 1; i >= 0 && cb == nil; i-- {
		c := s.calls[i]
		switch {
		case c.legacy != legacy:
		case legacy:
			cb = c
		case hasIdx:
			if c.hasIndex && c.index == idx {
				cb = c
			}
		case id != "":
			if c.id == id {
				cb = c
			}
		default:
			cb = c
		}
	}
	if cb != nil && id != "" && cb.id != "" && cb.id != id {
		cb = nil // the same index reused for another call
	}
	if cb == nil {
		cb = &callBuf{index: idx, hasIndex: hasIdx, legacy: legacy}
		s.calls = append(s.calls, cb)
	}
	if cb.id == "" {
		cb.id = id
	}
	if n := normalize.StrField(fn, "name"); n != "" && cb.name == "" {
		cb.name = n
	}
	if a, ok := fn["arguments"]; ok && !normalize.IsNull(a) {
		frag := normalize.Str(a)
		if t := bytes.TrimSpace(a); len(t) > 0 && t[0] != '"' {
			frag = string(t) // arguments sent as an object
		}
		if frag != "" {
			cb.args.WriteString(frag)
			cb.last = frag
			cb.frags++
		}
	}
}

// args picks the argument text of a call. The fragments joined are the
// arguments; but some servers end with a chunk that repeats the whole
// arguments after having streamed them, so that the joined text does not
// parse. Then the last fragment alone is taken when it is a whole JSON
// object or array and either the response finished normally or what came
// before it is the same arguments (or their start). Otherwise the joined
// text is kept as it is, unparsed.
func (cb *callBuf) argsText(finished bool) string {
	full := cb.args.String()
	if cb.frags < 2 || strings.TrimSpace(full) == "" || json.Valid([]byte(full)) {
		return full
	}
	last := strings.TrimSpace(cb.last)
	if last == "" || (last[0] != '{' && last[0] != '[') || !json.Valid([]byte(last)) {
		return full
	}
	prefix := strings.TrimSpace(full[:len(full)-len(cb.last)])
	if finished || strings.HasPrefix(last, prefix) || jsonEqual(prefix, last) {
		return cb.last
	}
	return full
}

// jsonEqual reports whether a and b are the same JSON value, whatever the
// order of object keys or the spacing: both are decoded and encoded again
// (encoding/json writes object keys sorted).
func jsonEqual(a, b string) bool {
	ca, okA := canonicalJSON(a)
	cb, okB := canonicalJSON(b)
	return okA && okB && bytes.Equal(ca, cb)
}

func canonicalJSON(s string) ([]byte, bool) {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return nil, false
	}
	out, err := json.Marshal(v)
	return out, err == nil
}

// endStream finishes the open stream as an assistant turn. done says the
// server ended the stream ([DONE]); a stream that ends otherwise before a
// finish reason is marked incomplete.
func (d *Decoder) endStream(done bool) []events.Event {
	s := d.stream
	if s == nil {
		return nil
	}
	d.stream = nil
	finished := done || s.finish != ""
	ev := events.Event{Kind: events.KindAssistantMessage, ID: s.id, Text: normalize.Built(&s.text),
		Thinking: normalize.Built(&s.think), Usage: s.usage, StopReason: normalize.Stop(s.finish), Incomplete: !finished}
	content, _ := json.Marshal(ev.Text)
	fp := normalize.Object{"role": json.RawMessage(`"assistant"`), "content": content}
	var fpCalls []map[string]any
	for i, cb := range s.calls {
		text := cb.argsText(finished)
		var raw json.RawMessage
		if text != "" {
			raw, _ = json.Marshal(text)
		}
		ev.ToolCalls = append(ev.ToolCalls, d.newCall(s.id, i, rawCall{id: cb.id, name: cb.name, args: raw}))
		fpCalls = append(fpCalls, map[string]any{"id": cb.id, "function": map[string]any{"name": cb.name, "arguments": text}})
	}
	if len(fpCalls) > 0 {
		fp["tool_calls"], _ = json.Marshal(fpCalls)
	}
	d.hist = append(d.hist, fingerprint(fp, "assistant"))
	out := []events.Event{ev}
	if len(s.others) > 0 {
		idx := make([]int, 0, len(s.others))
		for i := range s.others {
			idx = append(idx, int(i))
		}
		sort.Ints(idx)
		names := make([]string, len(idx))
		for i, n := range idx {
			names[i] = strconv.Itoa(n)
		}
		out = append(out, notice(events.LevelInfo, events.NoticeInfo, fmt.Sprintf(
			"response %s streamed more choices (index %s); only the first is shown", s.id, strings.Join(names, ", "))))
	}
	if !finished {
		out = append(out, notice(events.LevelWarning, events.NoticeInfo, fmt.Sprintf(
			"response %s ends before it finished (no finish_reason, no [DONE]); it is shown as far as it came", s.id)))
	}
	return out
}
