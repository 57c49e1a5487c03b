package suna

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/jsonx"
	"github.com/perch-tui/perch/normalize"
)

// fastChunk decodes the frames that make up most of a run's stream —
// streamed text, reasoning and tool-call argument chunks, a few words each
// — without the maps the general path builds for a record, its metadata
// and its content (three per frame, each key and value). It reads the
// same fields with the same rules as record, row and readContent, and
// reports false, having changed nothing, for any frame it does not take:
// another kind of record, or JSON that is not valid as it stands (the
// general path repairs NaN, and words its notices).
func (d *Decoder) fastChunk(data []byte) bool {
	// Every chunk names its stream_status, each of which ends in "chunk",
	// and the bare frames taken here their type. (A name spelled with \u
	// escapes goes the general way.)
	if !bytes.Contains(data, []byte("chunk")) && !bytes.Contains(data, []byte("tool_output_stream")) &&
		!bytes.Contains(data, []byte("ping")) {
		return false
	}
	var eventID, typ, cont, meta, output, callID, toolName, model []byte
	var hasID, hasLLM, hasThread bool
	if !jsonx.Members(data, func(k string, v []byte) {
		switch k {
		case "_event_id":
			eventID = v
		case "type":
			typ = v
		case "content":
			cont = v
		case "metadata":
			meta = v
		case "message_id":
			hasID = true
		case "is_llm_message":
			hasLLM = true
		case "thread_id":
			hasThread = true
		case "output":
			output = v
		case "tool_call_id":
			callID = v
		case "tool_name":
			toolName = v
		case "model":
			model = v
		}
	}) {
		return false
	}
	// isRow, on the fields' presence.
	if cont == nil && !hasID && !hasLLM && !(hasThread && meta != nil) {
		return d.fastBare(eventID, typ, output, callID, toolName, model)
	}

	// The metadata: an object, or a string that holds one (object).
	var mobj []byte
	switch {
	case len(meta) > 0 && meta[0] == '{':
		mobj = meta
	case len(meta) > 0 && meta[0] == '"':
		var ok bool
		if d.scratch[0], ok = jsonx.AppendUnquote(d.scratch[0][:0], meta); !ok {
			return false
		}
		if mobj = bytes.TrimSpace(d.scratch[0]); !bytes.HasPrefix(mobj, []byte("{")) {
			return false
		}
	default:
		return false
	}
	var status, mReasoning, mCalls []byte
	if !jsonx.Members(mobj, func(k string, v []byte) {
		switch k {
		case "stream_status":
			status = v
		case "reasoning_content":
			mReasoning = v
		case "tool_calls":
			mCalls = v
		}
	}) {
		return false
	}
	stream := name(status)
	if stream != "chunk" && stream != "reasoning_chunk" && stream != "tool_call_chunk" {
		return false
	}
	kind := name(typ)

	// The content, as readContent reads it.
	var c struct {
		obj                bool
		text, reasoning    []byte // the message object's content and reasoning_content
		plain              string
		hasPlain           bool
		role               []byte
		messageField, okay bool
	}
	readObj := func(o []byte) bool {
		return jsonx.Members(o, func(k string, v []byte) {
			switch k {
			case "role":
				c.role = v
			case "content":
				c.text, c.messageField = v, true
			case "reasoning_content":
				c.reasoning, c.messageField = v, true
			case "tool_calls", "tool_call_id":
				c.messageField = true
			}
		})
	}
	switch {
	case normalize.IsNull(cont):
	case cont[0] == '{':
		c.obj = true
		if !readObj(cont) {
			return false // cannot be: cont is a member of a valid object
		}
	case cont[0] == '[':
		// A list of parts: neither text nor reasoning for a chunk.
	case cont[0] == '"':
		var ok bool
		if d.scratch[1], ok = jsonx.AppendUnquote(d.scratch[1][:0], cont); !ok {
			return false
		}
		if o := bytes.TrimSpace(d.scratch[1]); bytes.HasPrefix(o, []byte("{")) {
			if !readObj(o) {
				return false // maybe NaN to repair: the general path's
			}
			c.obj = shaped(kind, name(c.role), c.messageField)
		}
		if !c.obj {
			c.plain, c.hasPlain = normalize.Str(cont), true
		}
	default:
		c.plain, c.hasPlain = string(cont), true
	}

	if !d.seen(eventID) {
		return true
	}
	switch stream {
	case "chunk":
		var delta string
		if c.obj {
			delta = text(c.text)
		} else if c.hasPlain {
			delta = c.plain
		}
		d.chunk(delta, normalize.Str(mReasoning))
	case "reasoning_chunk":
		th := ""
		if c.obj {
			if th = normalize.Str(c.reasoning); th == "" {
				th = normalize.Str(c.text)
			}
		}
		if th == "" && c.hasPlain {
			d.reasoningChunk(c.plain, true)
		} else {
			d.reasoningChunk(th, th != "")
		}
	case "tool_call_chunk":
		d.toolCallChunk(mCalls)
	}
	return true
}

// fastBare takes two bare events, as bare does: a ping and tool output as
// it is produced (one frame per few lines of it).
func (d *Decoder) fastBare(eventID, typ, output, callID, toolName, model []byte) bool {
	kind := name(typ)
	if kind != "ping" && kind != "tool_output_stream" {
		return false
	}
	if !d.seen(eventID) {
		return true
	}
	if kind == "ping" {
		d.setModel(normalize.Str(model))
		return true
	}
	out := normalize.Str(output)
	if out == "" {
		return true // is_final's empty chunk; the result row follows
	}
	id, tname := d.lastCall.str(callID), d.lastTool.str(toolName)
	d.emit(events.Event{Kind: events.KindToolOutputDelta, Text: out,
		Tool: &events.ToolEvent{Call: events.ToolCall{ID: id, Name: tname}, Name: tname}})
	return true
}

// name is normalize.Str for the names the fast path reads — record
// types, stream statuses, roles: one written plainly, as Suna writes them,
// is a constant, not a new string per frame.
func name(raw []byte) string {
	if len(raw) > 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		switch string(raw[1 : len(raw)-1]) { // no escapes in any of these
		case "chunk":
			return "chunk"
		case "reasoning_chunk":
			return "reasoning_chunk"
		case "tool_call_chunk":
			return "tool_call_chunk"
		case "assistant":
			return "assistant"
		case "reasoning":
			return "reasoning"
		case "user":
			return "user"
		case "tool":
			return "tool"
		case "status":
			return "status"
		case "ping":
			return "ping"
		case "tool_output_stream":
			return "tool_output_stream"
		}
	}
	return normalize.Str(raw)
}

// lastStr keeps the last JSON string value read for one field, and its
// text: a tool's output streams in many frames that name the same call.
type lastStr struct {
	raw []byte
	s   string
}

// str is normalize.Str(raw), the same string as last time when raw is.
func (l *lastStr) str(raw []byte) string {
	if l.raw != nil && bytes.Equal(raw, l.raw) {
		return l.s
	}
	l.raw, l.s = append(l.raw[:0], raw...), normalize.Str(raw)
	return l.s
}

// seen records a frame's _event_id (its JSON value); false when it was
// seen already (a reconnect's replay of what was already read).
func (d *Decoder) seen(eventID []byte) bool {
	if len(eventID) > 2 && eventID[0] == '"' && eventID[len(eventID)-1] == '"' {
		if id, ok := parseRedisID(eventID[1 : len(eventID)-1]); ok {
			return d.seenRedis(id)
		}
	}
	if id := normalize.Str(eventID); id != "" {
		return d.seenID(id)
	}
	return true
}

// seenID is seen for an id already unquoted.
func (d *Decoder) seenID(id string) bool {
	if r, ok := parseRedisID([]byte(id)); ok {
		return d.seenRedis(r)
	}
	if _, dup := d.events[id]; dup {
		return false
	}
	d.events[id] = struct{}{}
	return true
}

// redisID is a Redis stream entry id, "<ms>-<seq>". A stream's ids only
// grow, so the ids a decoder has seen are kept as a sorted list of number
// pairs that grows at its end — no string and no map entry per frame —
// and looked up by binary search when one is not past the last.
type redisID struct{ ms, seq uint64 }

func (a redisID) cmp(b redisID) int {
	switch {
	case a.ms != b.ms:
		return cmp.Compare(a.ms, b.ms)
	default:
		return cmp.Compare(a.seq, b.seq)
	}
}

// parseRedisID reads an id written the one way Redis writes it (decimal,
// no sign, no leading zero): then two ids are equal as numbers exactly
// when they are equal as text. Anything else is not taken.
func parseRedisID(b []byte) (redisID, bool) {
	i := bytes.IndexByte(b, '-')
	if i < 0 {
		return redisID{}, false
	}
	ms, ok1 := canonicalUint(b[:i])
	seq, ok2 := canonicalUint(b[i+1:])
	return redisID{ms, seq}, ok1 && ok2
}

func canonicalUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 || (b[0] == '0' && len(b) > 1) {
		return 0, false // 19 digits always fit in a uint64
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

func (d *Decoder) seenRedis(id redisID) bool {
	if n := len(d.ids); n == 0 || d.ids[n-1].cmp(id) < 0 {
		d.ids = append(d.ids, id)
		return true
	}
	i, found := slices.BinarySearchFunc(d.ids, id, redisID.cmp)
	if found {
		return false
	}
	d.ids = slices.Insert(d.ids, i, id)
	return true
}
