package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
)

// message maps one Chat Completions message. id is the turn id of an
// assistant message (a response's id); "" synthesizes one.
func (d *Decoder) message(pos string, m normalize.Object, id string) []events.Event {
	role := normalize.StrField(m, "role")
	switch role {
	case "system", "developer":
		// Instructions, not a turn of the conversation: a system notice
		// that says which of the two it was.
		return []events.Event{notice(events.LevelInfo, events.NoticeSystem, role+": "+contentText(m["content"]))}
	case "user":
		if id == "" {
			id = d.msgID()
		}
		return []events.Event{{Kind: events.KindUserMessage, ID: id, Text: contentText(m["content"])}}
	case "assistant":
		return []events.Event{d.assistant(m, id)}
	case "tool", "function":
		return []events.Event{d.toolResult(m)}
	}
	return []events.Event{notice(events.LevelWarning, events.NoticeInfo,
		fmt.Sprintf("%s: a message with the unknown role %q: %s", pos, role, contentText(m["content"])))}
}

// assistant is an assistant message as a turn, its tool calls created
// with their arguments normalized.
func (d *Decoder) assistant(m normalize.Object, id string) events.Event {
	if id == "" {
		id = d.msgID()
	}
	p := readAssistant(m)
	ev := events.Event{Kind: events.KindAssistantMessage, ID: id, Text: p.text, Thinking: p.thinking}
	for i, c := range p.calls {
		ev.ToolCalls = append(ev.ToolCalls, d.newCall(id, i, c))
	}
	return ev
}

// newCall builds the i-th call of turn id; a call without an id gets
// "<turn>:<i>" and waits for a result that names no call.
func (d *Decoder) newCall(turn string, i int, c rawCall) events.ToolCall {
	id := c.id
	if id == "" {
		id = turn + ":" + strconv.Itoa(i)
		d.pending = append(d.pending, pendingCall{id, c.name})
	}
	d.names.Put(id, c.name)
	return events.NewToolCall(id, c.name, validUTF8(c.args))
}

// validUTF8 replaces invalid bytes of raw JSON (they can only be inside
// its strings) with U+FFFD, as decoding would: arguments given as an
// object are kept raw, and must not carry them into the text shown.
func validUTF8(raw json.RawMessage) json.RawMessage {
	if utf8.Valid(raw) {
		return raw
	}
	return bytes.ToValidUTF8(raw, []byte("\uFFFD"))
}

// assistantParts is what an assistant message says, read the same way for
// turns and for recognising a message repeated in a later request.
type assistantParts struct {
	text, thinking string
	calls          []rawCall
}

type rawCall struct {
	id, name string
	args     json.RawMessage
}

func readAssistant(m normalize.Object) assistantParts {
	c := normalize.ParseContent(m["content"])
	p := assistantParts{text: c.Text}
	if r := normalize.StrField(m, "refusal"); r != "" {
		p.text = join(p.text, r)
	}
	if p.text == "" {
		if au := normalize.AsObjectShared(m["audio"]); au != nil {
			p.text = normalize.StrField(au, "transcript")
		}
	}
	th := normalize.FirstStr(m, "reasoning_content", "reasoning")
	if th == "" {
		th = normalize.ParseContent(m["reasoning_details"]).Thinking
	}
	p.thinking = join(th, c.Thinking)
	for _, tc := range c.ToolCalls { // tool_use blocks some proxies put in content
		args := tc.Args
		if args == nil && tc.ArgsRaw != "" {
			args, _ = json.Marshal(tc.ArgsRaw)
		}
		p.calls = append(p.calls, rawCall{id: tc.ID, name: tc.Name, args: args})
	}
	for _, raw := range normalize.AsListShared(m["tool_calls"]) {
		o := normalize.AsObjectShared(raw)
		if o == nil {
			p.calls = append(p.calls, rawCall{args: raw})
			continue
		}
		c := rawCall{id: normalize.StrField(o, "id")}
		switch {
		case has(o, "function"):
			fn := normalize.AsObjectShared(o["function"])
			c.name, c.args = normalize.StrField(fn, "name"), fn["arguments"]
		case has(o, "custom"): // custom tools take free text
			cu := normalize.AsObjectShared(o["custom"])
			c.name, c.args = normalize.StrField(cu, "name"), cu["input"]
		default:
			c.name, c.args = normalize.StrField(o, "name"), o["arguments"]
		}
		p.calls = append(p.calls, c)
	}
	if fc := normalize.AsObjectShared(m["function_call"]); fc != nil { // the legacy single call
		p.calls = append(p.calls, rawCall{name: normalize.StrField(fc, "name"), args: fc["arguments"]})
	}
	return p
}

// toolResult is a tool (or legacy function) message.
func (d *Decoder) toolResult(m normalize.Object) events.Event {
	id := normalize.StrField(m, "tool_call_id")
	name := normalize.StrField(m, "name")
	if id == "" {
		id = d.popPending(name)
	}
	if n, _ := d.names.Get(id); n != "" {
		name = n
	}
	return events.Event{Kind: events.KindPostToolCall, Tool: &events.ToolEvent{
		Call: events.ToolCall{ID: id, Name: name}, Name: name,
		Result: &events.ToolResult{Text: toolText(m["content"])},
	}}
}

// popPending takes the oldest call without an id waiting for a result of
// that name (any name when name is "").
func (d *Decoder) popPending(name string) string {
	for i, p := range d.pending {
		if name == "" || p.name == name {
			d.pending = append(d.pending[:i], d.pending[i+1:]...)
			return p.id
		}
	}
	return ""
}

// contentText is message content as text (images as placeholders).
func contentText(raw json.RawMessage) string {
	return normalize.ParseContent(raw).Text
}

// toolText is a tool message's content: a string, parts, or a JSON value
// that is not a part (kept as compact JSON).
func toolText(raw json.RawMessage) string {
	if o := normalize.AsObjectShared(raw); o != nil && !has(o, "type") && !has(o, "text") {
		return compactJSON(raw)
	}
	return contentText(raw)
}

func compactJSON(raw json.RawMessage) string {
	s := string(raw)
	if c := events.NewToolCall("", "", raw); c.Args != nil {
		s = string(c.Args)
	}
	return strings.ToValidUTF8(s, "\uFFFD") // the raw JSON may hold invalid bytes
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// fingerprint identifies a message for recognising it when a later
// request sends it again. It keeps what a client resends faithfully (role,
// text, tool calls with their source ids and arguments, the call a result
// answers) and leaves out what clients drop or reformat (reasoning, null
// versus empty content, key order and spacing of arguments).
func fingerprint(m normalize.Object, role string) uint64 {
	h := uint64(fnvOffset)
	put := func(s string) { // FNV-1a of s and a 0 byte, as hash/fnv's New64a
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * fnvPrime
		}
		h *= fnvPrime
	}
	put(role)
	switch role {
	case "assistant":
		p := readAssistant(m)
		put(p.text)
		for _, c := range p.calls {
			put(c.id)
			put(c.name)
			put(argsKey(c.args))
		}
	case "tool", "function":
		put(normalize.StrField(m, "tool_call_id"))
		put(normalize.StrField(m, "name"))
		put(toolText(m["content"]))
	default:
		put(contentText(m["content"]))
	}
	return h
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func argsKey(raw json.RawMessage) string {
	c := events.NewToolCall("", "", raw)
	if c.Args != nil {
		return string(c.Args)
	}
	return c.ArgsRaw
}

func hashBytes(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

// request shows the messages of a request that the conversation so far
// does not already hold (see align).
func (d *Decoder) request(pos string, o normalize.Object) []events.Event {
	raws := normalize.AsListShared(o["messages"])
	if raws == nil {
		return []events.Event{bad(pos, o["messages"], "messages is not a list")}
	}
	msgs := make([]normalize.Object, len(raws))
	fps := make([]uint64, len(raws))
	for i, r := range raws {
		msgs[i] = normalize.AsObjectShared(r)
		if msgs[i] == nil {
			fps[i] = hashBytes(r)
			continue
		}
		fps[i] = fingerprint(msgs[i], normalize.StrField(msgs[i], "role"))
	}
	start, diverged := align(d.hist, fps)
	var out []events.Event
	if diverged {
		out = append(out, notice(events.LevelInfo, events.NoticeInfo, fmt.Sprintf(
			"%s: this request does not continue the conversation above; its messages from message %d on are shown as sent",
			pos, start+1)))
		d.hist = d.hist[:start]
	}
	for i := start; i < len(raws); i++ {
		mp := pos + ", message " + strconv.Itoa(i+1)
		if msgs[i] == nil {
			out = append(out, bad(mp, raws[i], "not a message object"))
		} else {
			out = append(out, d.message(mp, msgs[i], "")...)
		}
		d.hist = append(d.hist, fps[i])
	}
	return out
}

// align says from which of a request's messages r on they are new to the
// conversation shown so far (h):
//   - r continues h (h is a prefix of r): the messages after h;
//   - r is a prefix of h (a retried request): none;
//   - r keeps the start of h, drops some older messages and then continues
//     h to its end (a client trimming its context window): the messages
//     after the part of h it repeats;
//   - otherwise r diverges from h after their common prefix, and its
//     messages from there on are new (diverged is then true).
func align(h, r []uint64) (start int, diverged bool) {
	i := 0
	for i < len(r) && i < len(h) && r[i] == h[i] {
		i++
	}
	if i == len(h) || i == len(r) {
		return i, false
	}
	for j := i + 1; j < len(h); j++ {
		n := len(h) - j
		if h[j] != r[i] || n > len(r)-i {
			continue
		}
		same := true
		for k := 0; k < n; k++ {
			if h[j+k] != r[i+k] {
				same = false
				break
			}
		}
		if same {
			return i + n, false
		}
	}
	return i, true
}

// bareMessage is a message that is a record of its own (an element of a
// top-level array of messages, or of a request document read message by
// message): shown as it comes.
func (d *Decoder) bareMessage(pos string, m normalize.Object) []events.Event {
	out := d.message(pos, m, "")
	d.hist = append(d.hist, fingerprint(m, normalize.StrField(m, "role")))
	return out
}

// response is a whole (non-streamed) completion: its first choice is the
// assistant turn, with the response's id, usage and finish reason.
func (d *Decoder) response(pos string, o normalize.Object) []events.Event {
	choices := normalize.AsListShared(o["choices"])
	var first normalize.Object
	for i, c := range choices {
		co := normalize.AsObjectShared(c)
		idx, ok := normalize.Int(co["index"])
		if !ok {
			idx = int64(i)
		}
		if co != nil && idx == 0 && first == nil {
			first = co
		}
	}
	if first == nil && len(choices) > 0 {
		first = normalize.AsObjectShared(choices[0])
	}
	if first == nil {
		return []events.Event{bad(pos, o["choices"], "a response without a readable choice")}
	}
	id := d.turnID(normalize.StrField(o, "id"))
	m := normalize.AsObjectShared(first["message"])
	if m == nil {
		m = normalize.Object{}
		if t, ok := first["text"]; ok { // the legacy completions shape
			m["content"] = t
		}
	}
	ev := d.assistant(m, id)
	ev.Usage = normalize.Usage(o["usage"])
	ev.StopReason = normalize.Stop(normalize.StrField(first, "finish_reason"))
	d.hist = append(d.hist, fingerprint(m, "assistant"))
	out := []events.Event{ev}
	if len(choices) > 1 {
		out = append(out, notice(events.LevelInfo, events.NoticeInfo, fmt.Sprintf(
			"%s: response %s has %d choices; only the first is shown", pos, id, len(choices))))
	}
	return out
}
