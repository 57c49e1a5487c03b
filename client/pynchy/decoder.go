package pynchy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/internal/jsonx"
	"github.com/perch-tui/perch/tools"
)

// Decoder turns pynchy records into perch events, one record at a time: the
// JSON objects of the `/api/events` stream (the data of each SSE frame) and
// the rows of the `/api/messages` history. It keeps the state a run needs
// (the open assistant turn, tool calls waiting for a result, the run's
// usage) and keeps only the chat it was made for, so the same type serves
// a recording and a live connection.
type Decoder struct {
	chat string
	unit string
	n    int

	out    []events.Event
	active bool // agent_activity said the agent works
	// inRun: the rows show a run under way (a trace came, and no
	// result_meta, reply or host message ended it yet). The history keeps
	// no activity, so a person's message that pynchy piped into a working
	// agent, e.g. between a tool call and its result, is told apart from
	// the next exchange this way, in the history as on the stream.
	inRun bool

	seg   *segment
	calls []pendingCall // tool_use traces waiting for a tool_result, oldest first
	meta  *runMeta      // a result_meta not yet attached to a reply
	last  *turn         // the run's latest assistant turn, for late usage
	users []string      // recent human texts, to recognise their user_input echo
	bang  string        // the command of the latest "!cmd" user message
}

// NewDecoder returns a decoder that keeps the records of chat (every record
// when chat is ""; records without a chat_jid are always kept). unit names
// a record in notices: "frame", "message", "line".
func NewDecoder(chat, unit string) *Decoder {
	if unit == "" {
		unit = "record"
	}
	return &Decoder{chat: chat, unit: unit}
}

// Adopt narrows a decoder made for every chat to chat, from now on. A
// one-pass import adopts the first chat it meets: earlier records had no
// chat_jid, and those are kept whatever the chat.
func (d *Decoder) Adopt(chat string) {
	if d.chat == "" {
		d.chat = chat
	}
}

// segment is an assistant turn being built from traces: the model's
// thinking, its text blocks and its tool calls, until something else
// happens in the chat.
type segment struct {
	id       string
	created  time.Time
	opened   bool // an event made its item in the timeline already
	thinking strings.Builder
	text     strings.Builder
	calls    []events.ToolCall
}

type pendingCall struct{ id, name string }

// runMeta is what a run's result_meta says.
type runMeta struct {
	usage   *events.Usage
	stop    string
	subtype string
	isError bool
}

// turn is an assistant turn already emitted, kept so that a late
// result_meta can complete it (the timeline takes a second report of a
// turn by its id).
type turn struct {
	ev            events.Event
	traceThinking string // the thinking that came from thinking traces
	final         bool   // the agent's reply message, not a run of traces
}

// Decode reads the next record; its position is one more than the last.
func (d *Decoder) Decode(raw []byte) []events.Event {
	return d.DecodeAt(d.n+1, raw)
}

// DecodeAt reads a record at a given 1-based position (used in ids and
// notices, so it must differ between records).
func (d *Decoder) DecodeAt(pos int, raw []byte) []events.Event {
	if pos > d.n {
		d.n = pos
	}
	d.out = nil
	d.record(pos, raw)
	return d.take()
}

// Flush ends the input: the open turn is emitted (incomplete when the run
// was still active) and a run's usage that found no reply is reported.
func (d *Decoder) Flush() []events.Event {
	d.out = nil
	d.closeSegment(d.active)
	d.settle()
	return d.take()
}

func (d *Decoder) take() []events.Event {
	out := d.out
	d.out = nil
	return out
}

func (d *Decoder) emit(ev events.Event) { d.out = append(d.out, ev) }

func (d *Decoder) where(pos int) string { return d.unit + " " + strconv.Itoa(pos) }

func (d *Decoder) bad(pos int, raw []byte, why string) {
	d.emit(events.Event{Kind: events.KindNotice, Level: events.LevelWarning, NoticeKind: events.NoticeError,
		Text: ingest.BadRecord(d.where(pos), raw, why)})
}

func (d *Decoder) unknown(pos int, raw []byte, what string) {
	d.emit(events.Event{Kind: events.KindNotice, Level: events.LevelInfo, NoticeKind: events.NoticeInfo,
		Text: ingest.BadRecord(d.where(pos), raw, what+", shown as is")})
}

func (d *Decoder) notice(level events.NoticeLevel, kind, text string, created time.Time) {
	d.emit(events.Event{Kind: events.KindNotice, Level: level, NoticeKind: kind, Text: text, Created: created})
}

// ChatOf returns the chat_jid of a record ("" when it has none or does not
// decode).
func ChatOf(raw []byte) string { return field(ingest.Repair(bytes.TrimSpace(raw)), "chat_jid") }

// field reads the string member name of a record as json.Unmarshal into a
// struct field tagged name would: the last member whose key equals name,
// ignoring case ("" when there is none or the record is not an object).
func field(raw []byte, name string) string {
	var v []byte
	if !jsonx.Members(raw, func(k string, val []byte) {
		if strings.EqualFold(k, name) {
			v = val
		}
	}) {
		return ""
	}
	return normalize.Str(v)
}

// traceNames are the senders of the trace rows that the history returns
// among the messages, with their data JSON-encoded in content.
var traceNames = map[string]bool{
	"thinking": true, "tool_use": true, "tool_result": true, "result_meta": true, "system": true,
}

func (d *Decoder) record(pos int, raw []byte) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return
	}
	if raw[0] != '{' {
		if jsonx.Valid(ingest.Repair(raw)) {
			d.bad(pos, raw, "not a JSON object")
		} else {
			d.bad(pos, raw, "not JSON")
		}
		return
	}
	o := normalize.AsObjectShared(ingest.Repair(raw)) // the decoder keeps nothing of a record
	if o == nil {
		d.bad(pos, raw, "not JSON")
		return
	}
	if jid := normalize.Str(o["chat_jid"]); d.chat != "" && jid != "" && jid != d.chat {
		return
	}
	// Trace data is spread over the event, so a data key may have replaced
	// "type": trace_type decides first.
	if _, ok := o["trace_type"]; ok {
		d.trace(pos, normalize.Str(o["trace_type"]), o, raw)
		return
	}
	typ := normalize.Str(o["type"])
	switch typ {
	case "message":
		d.message(pos, o)
	case "agent_activity":
		d.activity(pos, o, raw)
	case "chat_cleared":
		d.cleared(pos)
	case "agent_trace":
		d.unknown(pos, raw, "a trace without trace_type")
	default:
		_, hasSender := o["sender_name"]
		_, hasContent := o["content"]
		if hasSender && hasContent {
			d.message(pos, o) // a history row (or a message whose type was lost)
			return
		}
		if typ == "" {
			d.unknown(pos, raw, "a record of no known shape")
			return
		}
		d.unknown(pos, raw, fmt.Sprintf("unknown event type %q", typ))
	}
}

func timestamp(o normalize.Object) time.Time {
	s := normalize.Str(o["timestamp"])
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// text reads a content field: a string as is, anything else leniently.
func text(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '"' {
		return normalize.Str(raw)
	}
	return normalize.ParseContent(raw).Text
}

// message classifies a chat message by its sender.
func (d *Decoder) message(pos int, o normalize.Object) {
	sender := normalize.Str(o["sender_name"])
	content := text(o["content"])
	created := timestamp(o)
	human := false
	for _, k := range []string{"is_bot", "is_from_me"} {
		if v, ok := normalize.Bool(o[k]); ok && !v {
			human = true
		}
	}
	switch {
	case sender == "You":
		d.user(pos, content, created)
	case sender == "System":
		d.closeSegment(false)
		d.remember(content)
		d.notice(events.LevelInfo, events.NoticeSystem, strings.TrimPrefix(content, "[System Notice] "), created)
	case human:
		d.user(pos, content, created)
	case sender == "host":
		d.host(content, created)
	case sender == "command":
		d.command(pos, content, created)
	case sender == "security":
		d.closeSegment(false)
		d.notice(events.LevelInfo, events.NoticeHost, securityText(content), created)
	case traceNames[sender]:
		data := normalize.AsObjectShared(ingest.Repair([]byte(strings.TrimSpace(content))))
		if data == nil {
			d.bad(pos, []byte(content), "a "+sender+" row whose content is not a JSON object")
			return
		}
		d.trace(pos, sender, data, []byte(content))
	default:
		d.reply(pos, sender, content, created)
	}
}

func (d *Decoder) user(pos int, content string, created time.Time) {
	d.closeSegment(false)
	if !d.active && !d.inRun {
		// Outside a run a person's message starts the next exchange. Inside
		// one it is piped into the run, and the calls waiting for their
		// results keep waiting.
		d.settle()
		d.last = nil
		d.calls = nil
	}
	d.remember(content)
	d.bang = ""
	if cmd, ok := strings.CutPrefix(content, "!"); ok && strings.TrimSpace(cmd) != "" {
		d.bang = cmd
	}
	d.emit(events.Event{Kind: events.KindUserMessage, ID: "user-" + strconv.Itoa(pos), Text: content, Created: created})
}

// maxRemembered bounds the texts kept to recognise user_input echoes.
const maxRemembered = 64

func (d *Decoder) remember(content string) {
	if len(d.users) >= maxRemembered {
		d.users = d.users[1:]
	}
	d.users = append(d.users, content)
}

// consume reports whether a run's user_input repeats a message already
// shown, and forgets it.
func (d *Decoder) consume(content string) bool {
	for i, u := range d.users {
		if u == content {
			d.users = append(d.users[:i:i], d.users[i+1:]...)
			return true
		}
	}
	return false
}

func (d *Decoder) host(content string, created time.Time) {
	d.endRun()
	if s := d.seg; s != nil {
		// The reply that this host message carries streamed as a text
		// trace still wrapped in <host>: the notice replaces it.
		if _, ok := hostMessage(s.text.String()); ok {
			s.text.Reset()
		}
	}
	d.closeSegment(false)
	level := events.LevelInfo
	for _, p := range []string{"⚠️", "❌", "⏱️"} {
		if strings.HasPrefix(content, p) {
			level = events.LevelWarning
		}
	}
	d.notice(level, events.NoticeHost, content, created)
}

func securityText(content string) string {
	o := normalize.AsObjectShared(ingest.Repair([]byte(strings.TrimSpace(content))))
	if o == nil {
		return "Security: " + content
	}
	var parts []string
	for _, k := range []string{"decision", "tool_name", "workspace"} {
		if v := normalize.StrField(o, k); v != "" {
			parts = append(parts, v)
		}
	}
	s := "Security audit: " + strings.Join(parts, " ")
	if r := normalize.StrField(o, "reason"); r != "" {
		s += " (" + r + ")"
	}
	return s
}

// command is the output of a direct shell command ("!ls"): a tool item
// whose arguments are the command of the user message that asked for it.
func (d *Decoder) command(pos int, content string, created time.Time) {
	d.closeSegment(false)
	out, exit, failed := commandOutput(content)
	args := json.RawMessage("null")
	if d.bang != "" {
		args, _ = json.Marshal(map[string]string{"command": d.bang})
		d.bang = ""
	}
	call := events.NewToolCall("cmd-"+strconv.Itoa(pos), tools.PynchyCommand, args)
	d.emit(events.Event{Kind: events.KindPreToolCall, Created: created,
		Tool: &events.ToolEvent{Call: call, Name: call.Name}})
	d.emit(events.Event{Kind: events.KindPostToolCall, Created: created,
		Tool: &events.ToolEvent{Call: events.ToolCall{ID: call.ID, Name: call.Name}, Name: call.Name,
			Result: &events.ToolResult{Text: out, IsError: failed, ExitCode: exit}}})
}

// reply is the agent's message: the final text of a run.
func (d *Decoder) reply(pos int, sender, content string, created time.Time) {
	body := stripSpeaker(content, sender)
	if inner, ok := hostMessage(body); ok {
		d.host(inner, created)
		return
	}
	body, internal := splitInternal(body)
	body, brain := splitBrain(body)
	thoughts := joinParts(append(internal, brain...)...)

	d.endRun()
	ev := events.Event{Kind: events.KindAssistantMessage, Created: created, Text: body}
	traceThinking := ""
	switch s := d.seg; {
	case s != nil && len(s.calls) == 0:
		// The reply repeats the text traces of the open turn: it replaces
		// them, and keeps the turn's place and thinking.
		ev.ID = s.id
		if !s.created.IsZero() {
			ev.Created = s.created
		}
		traceThinking = s.thinking.String()
		d.seg = nil
	default:
		d.closeSegment(false)
		if l := d.last; l != nil && !l.final && l.ev.Text != "" && l.ev.Text == body {
			// The same text closed as a turn already (a follow-up came
			// between): complete that turn instead of repeating it.
			ev.ID, ev.Created, ev.ToolCalls = l.ev.ID, l.ev.Created, l.ev.ToolCalls
			traceThinking = l.traceThinking
		} else {
			ev.ID = "turn-" + strconv.Itoa(pos)
		}
	}
	ev.Thinking = joinParts(traceThinking, thoughts)
	if m := d.meta; m != nil {
		ev.Usage, ev.StopReason = m.usage, m.stop
		d.meta = nil
	}
	d.emit(ev)
	d.last = &turn{ev: ev, traceThinking: traceThinking, final: true}
}

func (d *Decoder) activity(pos int, o normalize.Object, raw []byte) {
	active, ok := normalize.Bool(o["active"])
	if !ok {
		d.bad(pos, raw, "agent_activity without a readable active flag")
		return
	}
	d.closeSegment(false)
	d.settle()
	d.calls, d.last = nil, nil
	d.active, d.inRun = active, false
	status := events.StatusIdle
	if active {
		status = events.StatusGenerating
	}
	d.emit(events.Event{Kind: events.KindRunState, RunStatus: status})
}

// cleared: pynchy hides the chat's earlier messages from its history and
// starts the agent afresh. The transcript keeps them and says so.
func (d *Decoder) cleared(pos int) {
	d.closeSegment(false)
	d.settle()
	d.calls, d.last, d.users, d.bang = nil, nil, nil, ""
	d.inRun = false
	d.notice(events.LevelInfo, events.NoticeHost, "Chat cleared: the agent starts afresh, and pynchy's history now begins here.", time.Time{})
}

// trace handles one agent trace: from the stream (fields spread flat in
// o) or from a history row (its decoded content).
func (d *Decoder) trace(pos int, typ string, o normalize.Object, raw []byte) {
	// Only a working agent writes traces; result_meta is the SDK's report
	// that the run is over (its reply, if any, comes with the same
	// timestamp, before or after it).
	d.inRun = typ != "result_meta"
	switch typ {
	case "thinking":
		t := normalize.StrField(o, "thinking")
		if t == "" {
			return // "thinking…" with nothing to show
		}
		s := d.textSegment(pos)
		if s.thinking.Len() > 0 {
			t = "\n\n" + t
		}
		s.thinking.WriteString(t)
		s.opened = true
		d.emit(events.Event{Kind: events.KindThinkingDelta, ID: s.id, Thinking: t})
	case "text":
		t := normalize.StrField(o, "text")
		if t == "" {
			return
		}
		s := d.textSegment(pos)
		if s.text.Len() > 0 {
			s.text.WriteString("\n\n")
		}
		s.text.WriteString(t)
	case "tool_use":
		d.toolUse(pos, o)
	case "tool_result":
		d.toolResult(pos, o)
	case "result_meta":
		d.resultMeta(o)
	case "system":
		d.system(o)
	case "user_input":
		content := text(o["content"])
		if d.consume(content) {
			return
		}
		if normalize.StrField(o, "sender_name") == "System" {
			d.closeSegment(false)
			d.notice(events.LevelInfo, events.NoticeSystem, strings.TrimPrefix(content, "[System Notice] "), time.Time{})
			return
		}
		d.closeSegment(false)
		d.emit(events.Event{Kind: events.KindUserMessage, ID: "user-" + strconv.Itoa(pos), Text: content})
	case "agent_input":
		d.closeSegment(false)
		label := sourceLabel(normalize.StrField(o, "source"))
		d.emit(events.Event{Kind: events.KindUserMessage, ID: "user-" + strconv.Itoa(pos),
			Text: "[" + label + "] " + text(o["content"])})
	default:
		name := typ
		if name == "" {
			name = "(none)"
		}
		d.unknown(pos, raw, fmt.Sprintf("unknown trace type %q", name))
	}
}

func sourceLabel(source string) string {
	switch source {
	case "scheduled_task":
		return "Scheduled Task"
	case "reset_handoff":
		return "Context Handoff"
	case "ipc_forward":
		return "Forwarded"
	case "":
		return "Agent input"
	}
	return source
}

// endRun: the agent's reply or a host message ends the run that the rows
// showed, so a person's message after it starts the next exchange (and the
// calls still waiting are dropped then: the next run's results are not
// theirs). A trace after it shows the run going on (the agent may write to
// the chat while it works), and a result still finds its call.
func (d *Decoder) endRun() { d.inRun = false }

// textSegment is the turn that thinking or text goes to: the open one,
// unless it already asked for tools (then the model has moved on).
func (d *Decoder) textSegment(pos int) *segment {
	if s := d.seg; s != nil && len(s.calls) == 0 {
		return s
	}
	d.closeSegment(false)
	d.seg = &segment{id: "turn-" + strconv.Itoa(pos)}
	return d.seg
}

func (d *Decoder) toolUse(pos int, o normalize.Object) {
	name := normalize.FirstStr(o, "tool_name", "name")
	if name == "" {
		name = "tool"
	}
	input, ok := o["tool_input"]
	if !ok {
		input = o["input"]
	}
	s := d.seg
	if s == nil {
		s = &segment{id: "turn-" + strconv.Itoa(pos)}
		d.seg = s
	}
	if !s.opened {
		// Give the turn its place before its tool's.
		d.emit(events.Event{Kind: events.KindTextDelta, ID: s.id})
		s.opened = true
	}
	call := events.NewToolCall("tool-"+strconv.Itoa(pos), name, input)
	s.calls = append(s.calls, call)
	d.calls = append(d.calls, pendingCall{call.ID, name})
	d.emit(events.Event{Kind: events.KindPreToolCall, Tool: &events.ToolEvent{Call: call, Name: name}})
}

// toolResult pairs a result with the oldest call still waiting: pynchy's
// tool_use traces carry no id to pair by. A result with nothing waiting
// shows under its own id.
func (d *Decoder) toolResult(pos int, o normalize.Object) {
	d.closeSegment(false)
	var id, name string
	if len(d.calls) > 0 {
		id, name = d.calls[0].id, d.calls[0].name
		d.calls = d.calls[1:]
	} else if id = normalize.StrField(o, "tool_use_id"); id == "" {
		id = "result-" + strconv.Itoa(pos)
	}
	isErr, _ := normalize.Bool(o["is_error"])
	d.emit(events.Event{Kind: events.KindPostToolCall, Tool: &events.ToolEvent{
		Call: events.ToolCall{ID: id, Name: name}, Name: name,
		Result: &events.ToolResult{Text: resultText(o["content"]), IsError: isErr}}})
}

// resultText reads a tool result's content: a string, which the agent may
// have filled with a JSON-encoded list of content blocks (decoded to their
// text), or such a list itself.
func resultText(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '"' {
		return text(raw)
	}
	s, _ := jsonx.AppendUnquote(nil, raw) // a buffer of its own
	t := bytes.TrimSpace(s)
	if !bytes.HasPrefix(t, []byte("[")) || !bytes.HasSuffix(t, []byte("]")) {
		return string(s)
	}
	l := normalize.AsListShared(ingest.Repair(t))
	if len(l) == 0 {
		return string(s)
	}
	for _, b := range l {
		if normalize.StrField(normalize.AsObjectShared(b), "type") == "" {
			return string(s) // not a list of typed blocks: plain text that looks like JSON
		}
	}
	// The list's content, as ParseContent reads it.
	var c normalize.Content
	for _, b := range l {
		c.Join(normalize.ParsePart(b))
	}
	return c.Text
}

// resultMeta is the Claude SDK's result: usage and cost of the whole run,
// and how it ended. It belongs to the run's reply, which normally follows.
func (d *Decoder) resultMeta(o normalize.Object) {
	m := &runMeta{usage: normalize.Usage(o["usage"]), subtype: normalize.StrField(o, "subtype")}
	m.stop = normalize.Stop(m.subtype)
	m.isError, _ = normalize.Bool(o["is_error"])
	if m.isError && (m.stop == "" || m.stop == events.StopEndTurn) {
		m.stop = events.StopError
	}
	if c, ok := normalize.Float(o["total_cost_usd"]); ok && m.usage != nil && !m.usage.HasCost {
		m.usage.CostUSD, m.usage.HasCost = c, true
	}
	d.meta = m
	if l := d.last; l != nil && l.final && l.ev.Usage == nil {
		// The reply came first (rows stored with the same timestamp).
		d.settle()
	}
}

// settle gives a run's result_meta to the run's latest turn, or reports
// it when the run had none.
func (d *Decoder) settle() {
	m := d.meta
	if m == nil {
		return
	}
	d.meta = nil
	if l := d.last; l != nil && l.ev.Usage == nil {
		l.ev.Usage = m.usage
		if m.stop != "" {
			l.ev.StopReason = m.stop
		}
		d.emit(l.ev)
		return
	}
	level := events.LevelInfo
	if m.isError {
		level = events.LevelWarning
	}
	var b strings.Builder
	b.WriteString("Run ended")
	if m.subtype != "" {
		fmt.Fprintf(&b, " (%s)", m.subtype)
	}
	b.WriteString(" with no reply")
	if u := m.usage; u != nil {
		fmt.Fprintf(&b, ": %d input tokens (%d cached), %d output", u.InputTokens, u.CachedTokens, u.OutputTokens)
		if u.HasCost {
			fmt.Fprintf(&b, ", $%.4f", u.CostUSD)
		}
	}
	b.WriteString(".")
	d.notice(level, events.NoticeInfo, b.String(), time.Time{})
}

func (d *Decoder) system(o normalize.Object) {
	sub := normalize.StrField(o, "subtype")
	switch sub {
	case "init":
		// Every query starts with one: nothing to show. A call still
		// waiting belongs to an earlier query and gets no result now (a
		// run that ended with no row to say so, in a history, which keeps
		// no activity).
		d.calls = nil
		return
	case "compact_boundary":
		d.notice(events.LevelInfo, events.NoticeContext, "Context compacted.", time.Time{})
	case "":
		d.notice(events.LevelInfo, events.NoticeInfo, "System event (no subtype).", time.Time{})
	default:
		d.notice(events.LevelInfo, events.NoticeInfo, "System event: "+sub+".", time.Time{})
	}
}

// closeSegment emits the open turn in its final form.
func (d *Decoder) closeSegment(incomplete bool) {
	s := d.seg
	if s == nil {
		return
	}
	d.seg = nil
	body, thoughts := splitInternal(s.text.String())
	host, isHost := hostMessage(body)
	if isHost {
		body = ""
	}
	traceThinking := s.thinking.String()
	thinking := joinParts(append([]string{traceThinking}, thoughts...)...)
	if body != "" || thinking != "" || len(s.calls) > 0 || s.opened {
		ev := events.Event{Kind: events.KindAssistantMessage, ID: s.id, Created: s.created, Text: body,
			Thinking: thinking, ToolCalls: s.calls, Incomplete: incomplete}
		d.emit(ev)
		d.last = &turn{ev: ev, traceThinking: traceThinking}
	}
	if isHost {
		d.notice(events.LevelInfo, events.NoticeHost, host, time.Time{})
	}
}
