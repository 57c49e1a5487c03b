package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/idset"
)

// Decoder reads the Messages API's streamed events (message_start,
// content_block_start/delta/stop, message_delta, message_stop, ping,
// error) into assistant turns. It is per stream and stateful: feed it the
// events in order, then call Flush once at the end. Several messages in one
// stream are several turns, each under its message id.
//
// A turn is emitted whole when its message_stop arrives; with Deltas set,
// its text and thinking are also emitted as they stream (KindTextDelta,
// KindThinkingDelta under the same id), for live views. A stream that ends
// inside a message gives that turn Incomplete, with the tool arguments
// received so far (kept raw with ArgsErr when they do not parse).
type Decoder struct {
	// Deltas emits text and thinking deltas as they arrive. Off (the
	// zero value), only whole turns are emitted: what an import wants.
	Deltas bool

	msg     *message
	started int             // messages started, for synthesized ids
	ids     idset.Set       // turn ids given out
	told    map[string]bool // unknown event and delta types already shown
}

// NewDecoder returns a decoder that emits whole turns only.
func NewDecoder() *Decoder { return &Decoder{} }

// message is the message being streamed.
type message struct {
	id      string
	blocks  map[int64]*block
	usage   UsageMax
	stop    string
	errored bool
	// final: a message_delta gave the usage at the reply's end; before
	// it, the output count is message_start's placeholder.
	final bool
}

// block is one content block being streamed.
type block struct {
	index   int64
	typ     string
	start   normalize.Object // the content_block of its start event
	text    strings.Builder  // text or thinking
	args    strings.Builder  // tool_use input, as streamed
	hasArgs bool
}

// streamTypes are the event types of the Messages API stream.
var streamTypes = map[string]bool{
	"message_start": true, "content_block_start": true, "content_block_delta": true,
	"content_block_stop": true, "message_delta": true, "message_stop": true,
	"ping": true, "error": true,
}

// IsStreamEvent reports whether typ is a Messages API stream event type.
func IsStreamEvent(typ string) bool { return streamTypes[typ] }

// Decode reads one event (its JSON data).
func (d *Decoder) Decode(raw []byte) []events.Event { return d.DecodeAt("", raw) }

// DecodeFrame reads one SSE frame; pos ("frame 7") prefixes the notices
// of an event that does not decode. The event's type is its data's "type",
// else the frame's name. The decoder keeps parts of f.Data until the
// message ends, so it must stay as it is (frames of sse.ReadFrames do:
// each frame's data is its own).
func (d *Decoder) DecodeFrame(pos string, f events.Frame) []events.Event {
	if len(bytes.TrimSpace(f.Data)) == 0 {
		if f.Name == "" || f.Name == "ping" {
			return nil
		}
		return d.decode(pos, f.Name, normalize.Object{})
	}
	o, why := ObjectInPlace(f.Data)
	if o == nil {
		return []events.Event{BadRecord(pos, f.Data, why)}
	}
	return d.decode(pos, f.Name, o)
}

// DecodeAt reads one event; pos ("line 12") prefixes the notice of an
// event that does not decode.
func (d *Decoder) DecodeAt(pos string, raw []byte) []events.Event {
	o, why := Object(raw)
	if o == nil {
		return []events.Event{BadRecord(pos, raw, why)}
	}
	return d.decode(pos, "", o)
}

// DecodeObject reads one event already decoded as an object. The decoder
// keeps parts of it until its message ends, so its values must not be
// split in place over a buffer that is reused (an object from Object or
// normalize.AsObject, or split in place over one, is fine).
func (d *Decoder) DecodeObject(pos string, o normalize.Object) []events.Event {
	return d.decode(pos, "", o)
}

// Open reports whether a message is being streamed.
func (d *Decoder) Open() bool { return d.msg != nil }

// Flush ends the stream: a message still open is emitted Incomplete.
func (d *Decoder) Flush() []events.Event {
	if d.msg == nil {
		return nil
	}
	return d.finish(true)
}

func (d *Decoder) decode(pos, name string, o normalize.Object) []events.Event {
	typ := normalize.StrField(o, "type")
	if typ == "" {
		typ = name
	}
	var out []events.Event
	switch typ {
	case "ping":
	case "message_start":
		if d.msg != nil {
			out = append(out, d.finish(true)...)
		}
		m := normalize.AsObjectShared(o["message"])
		d.begin(normalize.StrField(m, "id"))
		d.msg.usage.Merge(m["usage"])
		if s := normalize.StrField(m, "stop_reason"); s != "" {
			d.msg.stop = s
		}
		for i, b := range normalize.AsListShared(m["content"]) {
			out = append(out, d.startBlock(int64(i), normalize.AsObjectShared(b))...)
		}
	case "content_block_start":
		d.ensure()
		idx, ok := normalize.Int(o["index"])
		if !ok {
			idx = d.nextIndex()
		}
		out = append(out, d.startBlock(idx, normalize.AsObjectShared(o["content_block"]))...)
	case "content_block_delta":
		d.ensure()
		out = append(out, d.delta(pos, o)...)
	case "content_block_stop":
		// Nothing to do: a block is whole when its message stops.
	case "message_delta":
		d.ensure()
		if delta := normalize.AsObjectShared(o["delta"]); delta != nil {
			if s := normalize.StrField(delta, "stop_reason"); s != "" {
				d.msg.stop = s
			}
		}
		d.msg.usage.Merge(o["usage"])
		d.msg.final = d.msg.final || normalize.AsObjectShared(o["usage"]) != nil
	case "message_stop":
		if d.msg == nil {
			return nil // a repeated stop: the message is already out
		}
		out = append(out, d.finish(false)...)
	case "error":
		if d.msg != nil {
			d.msg.errored = true
			out = append(out, d.finish(true)...)
		}
		out = append(out, Notice(events.LevelError, events.NoticeError, ErrorText(o)))
	default:
		if !d.once("event " + typ) {
			return nil
		}
		out = append(out, Notice(events.LevelInfo, events.NoticeInfo,
			At(pos, fmt.Sprintf("stream event %q is not one perch knows; left out", typ))))
	}
	return out
}

// ErrorText describes an API error object ({"type":"error","error":{…}}).
func ErrorText(o normalize.Object) string {
	e := normalize.AsObjectShared(o["error"])
	typ, msg := normalize.StrField(e, "type"), normalize.StrField(e, "message")
	if e == nil {
		msg = normalize.StrField(o, "error")
		if msg == "" {
			msg = normalize.StrField(o, "message")
		}
	}
	switch {
	case typ != "" && msg != "":
		return fmt.Sprintf("API error (%s): %s", typ, msg)
	case msg != "":
		return "API error: " + msg
	case typ != "":
		return "API error: " + typ
	}
	return "API error: " + events.Excerpt(o["error"], 120)
}

// once reports whether key is new (and remembers it).
func (d *Decoder) once(key string) bool {
	if d.told[key] {
		return false
	}
	if d.told == nil {
		d.told = make(map[string]bool)
	}
	d.told[key] = true
	return true
}

// begin opens a message; id "" gets a synthesized one ("msg-3").
func (d *Decoder) begin(id string) {
	d.started++
	if id == "" {
		id = "msg-" + strconv.Itoa(d.started)
	}
	for base, n := id, 2; d.ids.Has(id); n++ {
		id = base + "#" + strconv.Itoa(n)
	}
	d.ids.Add(id)
	d.msg = &message{id: id, blocks: make(map[int64]*block)}
}

// ensure opens a message for events that arrive without a message_start
// (a recording that begins mid-stream).
func (d *Decoder) ensure() {
	if d.msg == nil {
		d.begin("")
	}
}

func (d *Decoder) nextIndex() int64 {
	var n int64
	for i := range d.msg.blocks {
		if i >= n {
			n = i + 1
		}
	}
	return n
}

func (d *Decoder) startBlock(idx int64, cb normalize.Object) []events.Event {
	b := &block{index: idx, typ: normalize.StrField(cb, "type"), start: cb}
	if b.typ == "" {
		b.typ = "text"
	}
	d.msg.blocks[idx] = b
	switch b.typ {
	case "text":
		return d.appendText(b, normalize.StrField(cb, "text"), false)
	case "thinking":
		return d.appendText(b, normalize.StrField(cb, "thinking"), true)
	}
	return nil
}

func (d *Decoder) appendText(b *block, s string, thinking bool) []events.Event {
	if s == "" {
		return nil
	}
	b.text.WriteString(s)
	if !d.Deltas {
		return nil
	}
	if thinking {
		return []events.Event{{Kind: events.KindThinkingDelta, ID: d.msg.id, Thinking: s}}
	}
	return []events.Event{{Kind: events.KindTextDelta, ID: d.msg.id, Text: s}}
}

func (d *Decoder) delta(pos string, o normalize.Object) []events.Event {
	delta := normalize.AsObjectShared(o["delta"])
	dt := normalize.StrField(delta, "type")
	idx, ok := normalize.Int(o["index"])
	if !ok {
		idx = d.nextIndex() - 1
		if idx < 0 {
			idx = 0
		}
	}
	b := d.msg.blocks[idx]
	if b == nil {
		// A delta without its start: make the block its delta implies.
		typ := map[string]string{"text_delta": "text", "thinking_delta": "thinking",
			"input_json_delta": "tool_use", "signature_delta": "thinking"}[dt]
		if typ == "" {
			typ = "text"
		}
		b = &block{index: idx, typ: typ, start: normalize.Object{}}
		d.msg.blocks[idx] = b
	}
	switch dt {
	case "text_delta":
		return d.appendText(b, normalize.StrField(delta, "text"), false)
	case "thinking_delta":
		return d.appendText(b, normalize.StrField(delta, "thinking"), true)
	case "input_json_delta":
		b.args.WriteString(normalize.StrField(delta, "partial_json"))
		b.hasArgs = true
	case "signature_delta", "citations_delta":
		// The signature only lets the API check the thinking; citations
		// annotate text already streamed. Neither is shown.
	default:
		if d.once("delta " + dt) {
			return []events.Event{Notice(events.LevelInfo, events.NoticeInfo,
				At(pos, fmt.Sprintf("stream delta %q is not one perch knows; left out", dt)))}
		}
	}
	return nil
}

// finish emits the open message as a turn (and the results of the
// server's tools it holds) and closes it.
func (d *Decoder) finish(incomplete bool) []events.Event {
	m := d.msg
	d.msg = nil
	idx := make([]int64, 0, len(m.blocks))
	for i := range m.blocks {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(i, j int) bool { return idx[i] < idx[j] })
	var c normalize.Content
	for _, i := range idx {
		JoinPart(&c, m.blocks[i].content())
	}
	ev := assistantFrom(m.id, c)
	if !incomplete || m.final {
		// A reply cut off before its end has no output count: message
		// start's is a placeholder, so its usage is unknown, not that.
		ev.Usage = m.usage.Usage()
	}
	ev.StopReason = normalize.Stop(m.stop)
	if m.errored {
		ev.StopReason = events.StopError
	}
	ev.Incomplete = incomplete
	out := append([]events.Event{ev}, ServerResults(c)...)
	var unknown []string
	for _, i := range idx {
		if typ := m.blocks[i].typ; !knownBlock(typ) && !slices.Contains(unknown, typ) {
			unknown = append(unknown, typ)
		}
	}
	if len(unknown) > 0 {
		out = append(out, UnknownBlockNotice(unknown))
	}
	return out
}

// content is the block read as a content part: what normalize.ParsePart
// makes of the block as the API would have sent it whole (json). Text and
// thinking, the bulk of a stream, are taken as they are rather than
// encoded and decoded again.
func (b *block) content() normalize.Content {
	_, summary := b.start["summary"]
	switch {
	case b.typ == "text":
		return normalize.Content{Text: normalize.Built(&b.text)}
	case b.typ == "thinking" && b.text.Len() > 0 && !summary:
		return normalize.Content{Thinking: normalize.Built(&b.text)}
	}
	return ParsePart(b.json())
}

// json is the block as the API would have sent it whole.
func (b *block) json() json.RawMessage {
	o := normalize.Object{}
	for k, v := range b.start {
		o[k] = v
	}
	str := func(s string) json.RawMessage { return Marshal(s) }
	o["type"] = str(b.typ)
	switch b.typ {
	case "text":
		o["text"] = str(b.text.String())
	case "thinking":
		o["thinking"] = str(b.text.String())
	case "tool_use":
		if b.hasArgs && strings.TrimSpace(b.args.String()) != "" {
			// As a string: events.NewToolCall parses it, and keeps it raw
			// with the reason when a cut stream left it unparseable.
			o["input"] = str(b.args.String())
		}
	}
	return Marshal(o)
}
