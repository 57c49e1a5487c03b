package suna

import (
	"bytes"
	"encoding/json"
	"github.com/perch-tui/perch/internal/idset"
	"github.com/perch-tui/perch/internal/recent"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/internal/jsonx"
)

// Decoder turns Suna's records — the frames of an agent run's stream, or
// the rows of a thread's message history, in order — into perch events. It
// keeps the state a stream needs (the open assistant turn, tool-call
// argument buffers, which turn the next stop reason or usage belongs to,
// the ids already seen), so it reads one record at a time and can serve a
// live stream as well as a file.
type Decoder struct {
	// Deltas makes the decoder emit text and thinking deltas as chunks
	// arrive (a live stream); the final message then carries the id the
	// deltas used. Without it (a file) a turn is assembled and emitted
	// once, under the row's message id, and events that arrive while it is
	// open wait until it is emitted so that the turn comes first.
	Deltas bool

	n      int       // records decoded (for positions)
	events idset.Set // _event_id values seen, but those in ids
	ids    redisIDs  // _event_id values seen that are Redis entry ids

	rows    idset.Set // message ids of rows seen
	turn    *openTurn
	held    []events.Event
	out     []events.Event
	turnSeq int

	turnIDs idset.Set // ids of emitted assistant turns
	// turns are the emitted assistant turns since the last user row, by
	// id, and respTurns each llm_response_id's last one: a stream has no
	// user rows, so both keep only the latest (recent.Window).
	turns     *recent.Map[*turnInfo]
	lastTurn  string // the last assistant turn since the last user turn
	respTurn  string // the last assistant turn of the current LLM response
	curResp   string // the current llm_response_id ("" when unknown)
	respTurns *recent.Map[string]
	results   idset.Set // tool call ids that have a result
	called    idset.Set // tool call ids of emitted turns
	// assistantRows are the message ids of assistant rows seen.
	assistantRows idset.Set
	waiting       []waiting // tool events waiting for their call (linked.go)
	model         string
	running       bool

	saidNoText bool // the notice about text-less optimized rows was given
	// native: a reply of this thread called tools natively (a call not
	// marked source "xml"): the thread runs the current pipeline, where
	// tool calls are never written as XML in the text, so XML-looking
	// text in its replies is text.
	native bool
}

// openTurn is an assistant turn whose chunks are arriving.
type openTurn struct {
	id       string // the id its deltas use ("turn-N")
	text     strings.Builder
	thinking strings.Builder
	calls    []*callBuf
	deltas   bool   // deltas of it were emitted
	rowID    string // a stored reasoning row's message id
	onlyRows bool   // opened by a stored reasoning row, not by stream chunks
	stop     string
}

// callBuf assembles a tool call's arguments from chunks.
type callBuf struct {
	id, name string
	index    int // the streaming_tool_{index} placeholder, -1 for none
	args     strings.Builder
	last     string // the last fragment (see final)
}

type turnInfo struct {
	stop       string
	usage      bool
	incomplete bool
}

// NewDecoder returns a decoder for a file (no deltas).
func NewDecoder() *Decoder { return &Decoder{} }

func (d *Decoder) init() {
	if d.turns == nil {
		d.forgetTurns()
	}
}

// Decode reads one record (an SSE frame's data, or one history row) and
// returns the events it means. Its position in notices is "frame N".
func (d *Decoder) Decode(data []byte) []events.Event { return d.decode("", true, data) }

// DecodeAt is Decode with the record's position for notices ("message 3").
func (d *Decoder) DecodeAt(pos string, data []byte) []events.Event { return d.decode(pos, false, data) }

// decode reads one record. With frame, its position is "frame N".
func (d *Decoder) decode(pos string, frame bool, data []byte) []events.Event {
	d.init()
	d.n++
	d.out = nil
	if frame {
		pos = "frame " + strconv.Itoa(d.n)
	}
	d.record(pos, data)
	out := d.out
	d.out = nil
	return out
}

// Flush ends the input: an open turn is emitted as it stands, marked
// incomplete, with the arguments assembled so far.
func (d *Decoder) Flush() []events.Event {
	d.init()
	d.out = nil
	d.closeTurn(true)
	d.release()
	d.releaseWaiting()
	out := d.out
	d.out = nil
	return out
}

// emit sends an event, or holds it while a file's turn is still open.
func (d *Decoder) emit(ev events.Event) {
	if d.turn != nil && !d.Deltas {
		d.held = append(d.held, ev)
		return
	}
	d.out = append(d.out, ev)
}

func (d *Decoder) release() {
	d.out = append(d.out, d.held...)
	d.held = nil
}

func (d *Decoder) notice(level events.NoticeLevel, kind, text string) {
	d.emit(events.Event{Kind: events.KindNotice, Level: level, NoticeKind: kind, Text: events.Bound(valid(text))})
}

func (d *Decoder) bad(pos string, raw []byte, why string) {
	d.notice(events.LevelWarning, events.NoticeError, ingest.BadRecord(pos, raw, why))
}

func (d *Decoder) record(pos string, data []byte) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return
	}
	repaired := ingest.Repair(data)
	r := normalize.AsObjectShared(repaired) // nothing of a record is kept
	if r == nil {
		why := "not JSON"
		switch {
		case jsonx.Valid(repaired):
			why = "not a JSON object"
		case data[0] == '{' || data[0] == '[':
			why = "invalid JSON"
		}
		d.bad(pos, data, why)
		return
	}
	if id := normalize.StrField(r, "_event_id"); id != "" && !d.seenID(id) {
		return // a reconnect's replay of what was already read
	}
	typ := normalize.StrField(r, "type")
	if isRow(r) {
		d.row(pos, typ, r)
		return
	}
	d.bare(pos, typ, r, data)
}

// isRow: a message row (its content and metadata, a thread or message id),
// as opposed to a bare stream event.
func isRow(r normalize.Object) bool {
	return has(r, "content", "message_id", "is_llm_message") ||
		(has(r, "thread_id") && has(r, "metadata"))
}

// row handles a message row of the stream or the history.
func (d *Decoder) row(pos, typ string, r normalize.Object) {
	id := normalize.StrField(r, "message_id")
	meta := object(r["metadata"])
	c := readContent(r["content"], typ)
	stream := normalize.StrField(meta, "stream_status")

	switch stream {
	case "chunk":
		var delta string
		if c.obj != nil {
			delta = text(c.obj["content"])
		} else if c.hasPlain {
			delta = c.plain
		}
		d.chunk(delta, normalize.StrField(meta, "reasoning_content"))
		return
	case "reasoning_chunk":
		th := normalize.FirstStr(c.obj, "reasoning_content", "content")
		if th == "" && c.hasPlain {
			d.reasoningChunk(c.plain, true)
		} else {
			d.reasoningChunk(th, th != "")
		}
		return
	case "tool_call_chunk":
		d.toolCallChunk(meta["tool_calls"])
		return
	}
	if id != "" && typ != "status" {
		key := typ + "\x00" + id
		if d.rows.Seen(key) {
			return
		}
	}
	if llm, known := normalize.Bool(r["is_llm_message"]); known && !llm {
		switch typ {
		case "user", "assistant", "tool", "summary":
			d.hostRow(typ, c)
			return
		}
	}
	switch typ {
	case "user":
		d.user(pos, id, c, meta)
	case "assistant":
		d.assistant(id, c, meta)
	case "reasoning":
		d.reasoningRow(id, c, meta)
	case "tool":
		d.tool(id, c, meta)
	case "status":
		d.statusRow(c.obj, meta)
	case "llm_response_start":
		d.responseStart(normalize.FirstStr(c.obj, "llm_response_id"), c.obj)
		if d.curResp == "" {
			d.curResp = normalize.StrField(meta, "llm_response_id")
		}
	case "llm_response_end", "assistant_response_end":
		d.responseEnd(c.obj, meta)
	case "image_context", "browser_state":
		// Internal rows (an image or a browser screenshot put before the
		// model): the web UI hides them, and they hold base64 images.
	case "system":
		d.emit(events.Event{Kind: events.KindSystemPromptSet, Text: d.rowText(c)})
	case "summary":
		d.notice(events.LevelInfo, events.NoticeContext, "Summary of earlier conversation:\n"+d.rowText(c))
	default:
		name := typ
		if name == "" {
			name = "(none)"
		}
		d.notice(events.LevelInfo, events.NoticeInfo,
			pos+": message of unknown type "+strconv.Quote(name)+": "+events.Excerpt(r["content"], 120))
	}
}

// rowText is the text of a message row's content.
func (d *Decoder) rowText(c content) string {
	switch {
	case c.obj != nil:
		if notNull(c.obj, "content") {
			return text(c.obj["content"])
		}
		return ""
	case c.hasPlain:
		return c.plain
	case c.list != nil:
		return text(c.list)
	}
	return ""
}

// hostRow shows a row that is not part of the model's conversation.
func (d *Decoder) hostRow(typ string, c content) {
	t := d.rowText(c)
	if strings.TrimSpace(t) == "" {
		return
	}
	d.notice(events.LevelInfo, events.NoticeHost, t)
}

// forgetTurns starts the turns and responses looked up anew.
func (d *Decoder) forgetTurns() {
	d.turns, d.respTurns = recent.New[*turnInfo](recent.Window), recent.New[string](recent.Window)
}

func (d *Decoder) user(pos, id string, c content, meta normalize.Object) {
	d.closeTurn(true)
	d.releaseWaiting()
	// No later row can update a turn from before the user's: forget them.
	d.lastTurn, d.respTurn = "", ""
	d.forgetTurns()
	var parts json.RawMessage
	switch {
	case c.obj != nil:
		parts = c.obj["content"]
	case c.list != nil:
		parts = c.list
	}
	if parts != nil && hasCacheControl(parts) {
		// A cached block: earlier turns flattened into one text for the
		// prompt cache. Not something the user said.
		t := normalize.ParseContent(parts).Text
		d.notice(events.LevelInfo, events.NoticeContext,
			"Cached context ("+strconv.Itoa(len(t))+" bytes of earlier conversation): "+events.Excerpt([]byte(t), 120))
		return
	}
	var t string
	var pc normalize.Content
	if parts != nil {
		pc = normalize.ParseContent(parts)
		t = pc.Text
	} else {
		t = d.rowText(c)
	}
	if compressed, _ := normalize.Bool(meta["compressed"]); compressed {
		if cc := normalize.StrField(meta, "compressed_content"); cc != "" {
			t = cc
		}
	}
	if id == "" {
		id = "msg-" + strconv.Itoa(d.n)
	}
	if t != "" || len(pc.Results) == 0 {
		d.emit(events.Event{Kind: events.KindUserMessage, ID: id, Text: t})
	}
	for _, r := range pc.Results {
		d.emit(events.Event{Kind: events.KindPostToolCall, Tool: &events.ToolEvent{
			Call:   events.ToolCall{ID: r.CallID},
			Result: &events.ToolResult{Text: r.Text, IsError: r.IsError && r.Known}}})
		d.results.Add(r.CallID)
	}
}

// assistant handles a whole assistant message: a history row, or the
// stream's "complete" row that ends the turn its chunks built.
func (d *Decoder) assistant(id string, c content, meta normalize.Object) {
	owner := id
	t := d.turn
	if owner == "" {
		if t != nil {
			owner = t.id
		} else {
			owner = d.nextTurnID()
		}
	}
	var body, thinking string
	hasBody := false
	var calls []call
	if c.obj != nil {
		if notNull(c.obj, "content") {
			pc := normalize.ParseContent(c.obj["content"])
			body, thinking, hasBody = pc.Text, pc.Thinking, true
			for _, tc := range pc.ToolCalls {
				calls = append(calls, call{ToolCall: tc})
			}
		}
		calls = merge(readCalls(c.obj["tool_calls"], owner), calls)
		if th := normalize.FirstStr(c.obj, "reasoning_content", "reasoning"); th != "" {
			thinking = th
		}
	} else if c.hasPlain {
		body, hasBody = c.plain, true
	} else if c.list != nil {
		pc := normalize.ParseContent(c.list)
		body, thinking, hasBody = pc.Text, pc.Thinking, true
	}
	if !hasBody || body == "" {
		if tc, ok := meta["text_content"]; ok && !normalize.IsNull(tc) {
			body, hasBody = normalize.Str(tc), true
		}
	}
	calls = merge(calls, readCalls(meta["tool_calls"], owner))
	if th := normalize.StrField(meta, "reasoning_content"); th != "" {
		thinking = th
	}
	for _, c := range calls {
		d.native = d.native || !c.xml
	}
	xmlStripped := false
	if xc, stripped, ok := parseXMLCalls(body); ok && !d.native {
		body, xmlStripped = stripped, true
		if !anyXML(calls) {
			for i, x := range xc {
				calls = append(calls, call{ToolCall: events.NewToolCall(
					"xml_tool_index"+strconv.Itoa(i)+"_"+owner, x.name, x.args), xml: true})
			}
		}
	}

	if c.obj == nil && !c.hasPlain && c.list == nil && !has(meta, "text_content") && len(calls) == 0 &&
		thinking == "" && t == nil && !d.saidNoText {
		d.saidNoText = true
		d.notice(events.LevelWarning, events.NoticeInfo, "Assistant messages without their text: the optimized "+
			"history leaves it out for runs of the current pipeline; fetch the messages with optimized=false to see it.")
	}
	ev := events.Event{Kind: events.KindAssistantMessage, ID: id, Text: body, Thinking: thinking,
		ToolCalls: toolCalls(calls)}
	if t != nil {
		// The final form of the turn the chunks built: it replaces them,
		// except for what it lacks (the reasoning is often only streamed).
		if ev.Text == "" && !xmlStripped {
			ev.Text = t.text.String()
		}
		if ev.Thinking == "" {
			ev.Thinking = t.thinking.String()
		}
		if len(ev.ToolCalls) == 0 {
			ev.ToolCalls = t.finalCalls()
		}
		if t.deltas || ev.ID == "" {
			ev.ID = t.id
		}
		ev.StopReason = t.stop
		d.turn = nil
	}
	if ev.ID == "" {
		ev.ID = owner
	}
	if id != "" {
		d.assistantRows.Add(id)
	}
	d.finishTurn(ev, id)
}

func anyXML(cs []call) bool {
	for _, c := range cs {
		if c.xml {
			return true
		}
	}
	return false
}

// finishTurn emits an assistant turn's final form (of the row rowID, or
// ""), then what waited for it.
func (d *Decoder) finishTurn(ev events.Event, rowID string) {
	if d.turnIDs.Seen(ev.ID) {
		// A second turn under an id already used: keep both visible.
		ev.ID = d.nextTurnID()
		d.turnIDs.Add(ev.ID)
	}
	d.out = append(d.out, ev)
	d.calledBy(rowID, ev.ToolCalls)
	d.release()
	d.turns.Put(ev.ID, &turnInfo{stop: ev.StopReason, incomplete: ev.Incomplete})
	d.lastTurn, d.respTurn = ev.ID, ev.ID
	if d.curResp != "" {
		d.respTurns.Put(d.curResp, ev.ID)
	}
}

func (d *Decoder) nextTurnID() string {
	for {
		d.turnSeq++
		id := "turn-" + strconv.Itoa(d.turnSeq)
		if !d.turnIDs.Has(id) {
			return id
		}
	}
}

// open returns the open turn, opening one if needed.
func (d *Decoder) open() *openTurn {
	if d.turn == nil {
		d.turn = &openTurn{id: d.nextTurnID()}
	}
	return d.turn
}

// closeTurn emits the open turn as it stands (a stream cut or ended before
// its final form). A turn of stored reasoning rows is whole, not cut.
func (d *Decoder) closeTurn(incomplete bool) {
	t := d.turn
	if t == nil {
		return
	}
	d.turn = nil
	ev := events.Event{Kind: events.KindAssistantMessage, ID: t.id, Text: normalize.Built(&t.text),
		Thinking: normalize.Built(&t.thinking), ToolCalls: t.finalCalls(), StopReason: t.stop,
		Incomplete: incomplete && !t.onlyRows}
	if t.onlyRows && t.rowID != "" && !t.deltas {
		ev.ID = t.rowID
	}
	d.finishTurn(ev, "")
}

// chunk is a streamed piece of the open turn's text, and (older runs) of
// its reasoning.
func (d *Decoder) chunk(delta, th string) {
	t := d.open()
	t.onlyRows = false
	if delta != "" {
		t.text.WriteString(delta)
		if d.Deltas {
			t.deltas = true
			d.out = append(d.out, events.Event{Kind: events.KindTextDelta, ID: t.id, Text: delta})
		}
	}
	// Older runs carried reasoning on the chunk's metadata.
	if th != "" {
		d.thinkingDelta(t, th)
	}
}

func (d *Decoder) thinkingDelta(t *openTurn, th string) {
	t.thinking.WriteString(th)
	if d.Deltas {
		t.deltas = true
		d.out = append(d.out, events.Event{Kind: events.KindThinkingDelta, ID: t.id, Thinking: th})
	}
}

// reasoningChunk is a streamed piece of the open turn's reasoning; a
// chunk of plain text counts even when empty (it is a delta all the same).
func (d *Decoder) reasoningChunk(th string, some bool) {
	t := d.open()
	t.onlyRows = false
	if some {
		d.thinkingDelta(t, th)
	}
}

// reasoningRow is a stored reasoning row: the whole reasoning of the
// assistant message that follows it.
func (d *Decoder) reasoningRow(id string, c content, _ normalize.Object) {
	fresh := d.turn == nil
	t := d.open()
	if fresh {
		t.onlyRows, t.rowID = true, id
	}
	th := normalize.FirstStr(c.obj, "reasoning_content", "content")
	if th == "" && c.hasPlain {
		th = c.plain
	}
	d.thinkingDelta(t, th)
}

// toolCallChunk appends argument fragments (the metadata's tool_calls) to
// the open turn's calls.
func (d *Decoder) toolCallChunk(calls json.RawMessage) {
	t := d.open()
	t.onlyRows = false
	for pos, item := range normalize.AsListShared(calls) {
		o := normalize.AsObjectShared(item)
		if o == nil {
			continue
		}
		id := normalize.FirstStr(o, "tool_call_id", "id")
		name := normalize.FirstStr(o, "function_name", "name")
		index := pos
		if v, ok := normalize.Int(o["index"]); ok {
			index = int(v)
		} else if v, ok := normalize.Int(o["tool_index"]); ok {
			index = int(v)
		}
		b := t.buf(id, name, index)
		frag := normalize.Str(o["arguments_delta"])
		if _, ok := o["arguments_delta"]; !ok {
			frag = argText(o["arguments"])
		}
		if isDelta, known := normalize.Bool(o["is_delta"]); known && !isDelta {
			b.args.Reset() // the whole arguments so far, not a fragment
		}
		b.args.WriteString(frag)
		if frag != "" {
			b.last = frag
		}
	}
}

// argText is arguments as text: a string as is, anything else its JSON.
func argText(raw json.RawMessage) string {
	if s, ok := strOf(raw); ok {
		return s
	}
	if normalize.IsNull(raw) {
		return ""
	}
	return string(bytes.TrimSpace(raw))
}

func strOf(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		return jsonx.Unquote(raw)
	}
	return "", false
}

const placeholder = "streaming_tool_"

// buf finds the buffer of a call. Before the provider sends a call's id,
// Suna names it streaming_tool_{index}; when the real id arrives, the
// placeholder's buffer takes it.
func (t *openTurn) buf(id, name string, index int) *callBuf {
	ph := -1
	if strings.HasPrefix(id, placeholder) {
		if n, err := strconv.Atoi(id[len(placeholder):]); err == nil {
			ph = n
		}
	}
	for _, b := range t.calls {
		if b.id == id && id != "" {
			if b.name == "" {
				b.name = name
			}
			return b
		}
	}
	if ph < 0 && id != "" {
		// A real id: re-key the placeholder of the same index, or else the
		// first placeholder of the same name.
		var match *callBuf
		for _, b := range t.calls {
			if b.index >= 0 && strings.HasPrefix(b.id, placeholder) && b.index == index && (name == "" || b.name == name) {
				match = b
				break
			}
		}
		if match == nil {
			for _, b := range t.calls {
				if b.index >= 0 && strings.HasPrefix(b.id, placeholder) && b.name == name {
					match = b
					break
				}
			}
		}
		if match != nil {
			match.id = id
			return match
		}
	}
	if id == "" {
		id = t.id + ":" + strconv.Itoa(len(t.calls))
	}
	b := &callBuf{id: id, name: name, index: ph}
	t.calls = append(t.calls, b)
	return b
}

// final is the call as assembled. When the fragments joined do not parse
// but the last one alone does, a provider repeated the whole arguments at
// the end: that repeat is the truth.
func (b *callBuf) final() events.ToolCall {
	args := b.args.String()
	if !jsonx.Valid([]byte(args)) && b.last != args && jsonx.Valid([]byte(b.last)) {
		args = b.last
	}
	raw, _ := json.Marshal(args)
	return events.NewToolCall(b.id, b.name, raw)
}

func (t *openTurn) finalCalls() []events.ToolCall {
	if len(t.calls) == 0 {
		return nil
	}
	out := make([]events.ToolCall, len(t.calls))
	for i, b := range t.calls {
		out[i] = b.final()
	}
	return out
}

// argsOf is the arguments assembled so far for a call of the open turn.
func (d *Decoder) argsOf(id string) (events.ToolCall, bool) {
	if d.turn == nil || id == "" {
		return events.ToolCall{}, false
	}
	for _, b := range d.turn.calls {
		if b.id == id {
			return b.final(), true
		}
	}
	return events.ToolCall{}, false
}

func (d *Decoder) tool(id string, c content, meta normalize.Object) {
	callID, name, res := toolResult(c, meta)
	d.results.Add(callID)
	turnID := normalize.FirstStr(c.obj, "assistant_message_id")
	if turnID == "" {
		turnID = normalize.StrField(meta, "assistant_message_id")
	}
	d.emitTool(callID, turnID, events.Event{Kind: events.KindPostToolCall, ID: id, Tool: &events.ToolEvent{
		Call: events.ToolCall{ID: callID, Name: name}, Name: name, Result: res}})
}

// update adds a stop reason or usage that arrived after a turn was
// emitted: a second report under the turn's id completes it.
func (d *Decoder) update(id, stop string, u *events.Usage) {
	info, _ := d.turns.Get(id)
	if info == nil {
		return
	}
	ev := events.Event{Kind: events.KindAssistantMessage, ID: id, Incomplete: info.incomplete}
	changed := false
	if stop != "" && (info.stop == "" || (weak(info.stop) && !weak(stop))) && stop != info.stop {
		info.stop, ev.StopReason, changed = stop, stop, true
	}
	if u != nil && !info.usage {
		info.usage, ev.Usage, changed = true, u, true
	}
	if changed {
		d.emit(ev)
	}
}

// weak stop reasons say the model's turn ended as usual; a later, more
// telling reason (the run was terminated or cancelled) replaces them.
func weak(stop string) bool {
	return stop == events.StopEndTurn || stop == events.StopToolUse || stop == events.StopOther
}

// setModel reports the model once per change (the status bar shows it).
func (d *Decoder) setModel(m string) {
	if m != "" && m != d.model {
		d.model = m
		d.emit(events.Event{Kind: events.KindModelLoaded, Model: m})
	}
}

func (d *Decoder) setRunning(on bool) {
	if on && !d.running {
		d.emit(events.Event{Kind: events.KindRunState, RunStatus: events.StatusGenerating})
	}
	d.running = on
}

// responseStart: one LLM call begins (there are several per run when the
// agent continues on its own). A turn still open belongs to the last one.
func (d *Decoder) responseStart(respID string, c normalize.Object) {
	d.closeTurn(true)
	d.curResp, d.respTurn = respID, ""
	d.setModel(normalize.StrField(c, "model"))
	d.setRunning(true)
}

// responseEnd: the LLM call is over; the history's row holds its usage,
// which belongs to the last assistant turn of that call.
func (d *Decoder) responseEnd(c, meta normalize.Object) {
	d.closeTurn(true)
	respID := normalize.FirstStr(c, "llm_response_id")
	if respID == "" {
		respID = normalize.StrField(meta, "llm_response_id")
	}
	target := ""
	if respID != "" {
		target, _ = d.respTurns.Get(respID)
	}
	if target == "" {
		target = d.respTurn
	}
	u := normalize.Usage(c["usage"])
	stop := ""
	// Older rows hold the provider's whole response.
	if ch := normalize.AsListShared(c["choices"]); len(ch) > 0 {
		first := normalize.AsObjectShared(ch[0])
		stop = normalize.Stop(normalize.StrField(first, "finish_reason"))
	}
	if target != "" && (u != nil || stop != "") {
		d.update(target, stop, u)
	}
	d.setModel(normalize.StrField(c, "model"))
	d.curResp, d.respTurn = "", ""
}

// finish is the stop reason of the LLM call that just ended.
func (d *Decoder) finish(reason string) {
	stop := normalize.Stop(reason)
	if stop == "" {
		return
	}
	if t := d.turn; t != nil {
		if t.stop == "" || (weak(t.stop) && !weak(stop)) {
			t.stop = stop
		}
		return
	}
	target := d.respTurn
	if target == "" {
		target = d.lastTurn
	}
	if target != "" {
		d.update(target, stop, nil)
	}
}

// statusRow handles a status row (content {"status_type": …}).
func (d *Decoder) statusRow(c, meta normalize.Object) {
	st := normalize.StrField(c, "status_type")
	switch st {
	case "thread_run_start":
		d.setRunning(true)
	case "finish":
		d.finish(normalize.StrField(c, "finish_reason"))
	case "error":
		d.closeTurn(true)
		msg := normalize.FirstStr(c, "message", "error")
		if msg == "" {
			msg = "an error occurred"
		}
		d.notice(events.LevelError, events.NoticeError, msg)
	case "tool_started":
		id := normalize.StrField(c, "tool_call_id")
		name := normalize.StrField(c, "function_name")
		call, ok := d.argsOf(id)
		if !ok {
			call = events.ToolCall{ID: id, Name: name}
		}
		if call.Name == "" {
			call.Name = name
		}
		d.emitTool(id, "", events.Event{Kind: events.KindPreToolCall, Tool: &events.ToolEvent{Call: call, Name: name}})
	case "tool_completed", "tool_failed", "tool_error":
		id := normalize.StrField(c, "tool_call_id")
		if id == "" || d.results.Has(id) {
			return
		}
		// No result row (yet): the status is all there is. A result row
		// that comes later replaces this.
		res := &events.ToolResult{}
		if st != "tool_completed" {
			res.IsError = true
			res.ErrorText = normalize.FirstStr(c, "message", "error")
			if res.ErrorText == "" {
				res.ErrorText = "the tool failed"
			}
		}
		name := normalize.StrField(c, "function_name")
		d.emitTool(id, "", events.Event{Kind: events.KindPostToolCall, Tool: &events.ToolEvent{
			Call: events.ToolCall{ID: id, Name: name}, Name: name, Result: res}})
	}
	// thread_run_end, terminating_tool_completed and the rest are the run's
	// lifecycle: nothing to show.
	if finishReason := normalize.StrField(c, "finish_reason"); finishReason != "" && st != "finish" {
		d.finish(finishReason)
	}
}
