package attocode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/jsonx"
)

// Decoder reads Attocode's JSON-lines records one at a time: entries of the
// TypeScript session log ({"timestamp","type","data"}), records of the
// trace log ({"_type","_ts",…}), or bare messages ({"role",…}). Each record
// is recognised on its own, so a file may mix them. It keeps what pairing
// needs (tool names by call id, the conversation shown so far, turns the
// trace opened) and is meant to be fed in order; Flush ends the input.
type Decoder struct {
	msgs messages
	n    int // records decoded

	// The session log: fingerprints of the conversation messages shown, in
	// order, so that a checkpoint (the whole conversation at a point) adds
	// only what is new. A checkpoint may restore any earlier message, so
	// all are kept, 8 bytes each; a checkpoint finds them by one pass.
	shown   []uint64
	metrics json.RawMessage // the last checkpoint's totals

	tr traceState
}

// NewDecoder is a decoder at the start of a file.
func NewDecoder() *Decoder {
	return &Decoder{msgs: *newMessages(), tr: newTraceState()}
}

// Decode reads the next record (one JSON line); notices name it by its
// ordinal ("record 7").
func (d *Decoder) Decode(raw []byte) []events.Event {
	return d.DecodeAt("record "+strconv.Itoa(d.n+1), raw)
}

// DecodeAt reads the next record; pos names it in notices ("line 12").
func (d *Decoder) DecodeAt(pos string, raw []byte) []events.Event {
	d.n++
	raw = bytes.TrimSpace(raw)
	o := normalize.AsObjectShared(raw)
	if o == nil {
		if !jsonx.Valid(raw) {
			return append(d.tr.flushRun(), badRecord(pos, raw, "not JSON"))
		}
		return append(d.tr.flushRun(), badRecord(pos, raw, "not a JSON object"))
	}
	if _, ok := o["_type"]; ok {
		return d.trace(pos, o, raw)
	}
	out := d.tr.flushRun()
	_, hasType := o["type"]
	_, hasData := o["data"]
	switch {
	case hasType && hasData:
		return append(out, d.entry(pos, o, raw)...)
	case o["role"] != nil:
		return append(out, d.conversation(pos, raw)...)
	}
	return append(out, badRecord(pos, raw, "not an Attocode record"))
}

// Flush ends the input: the trace's turns that never got their response
// are shown incomplete, and the session log's last totals are told.
func (d *Decoder) Flush() []events.Event {
	out := d.tr.flushRun()
	out = append(out, d.tr.flushTurns()...)
	if m := normalize.AsObjectShared(d.metrics); m != nil {
		if s := summary(m); s != "" {
			out = append(out, notice(events.NoticeContext, "Totals at the last checkpoint: "+s))
		}
		d.metrics = nil
	}
	return out
}

// conversation shows one message and remembers it as shown.
func (d *Decoder) conversation(pos string, raw json.RawMessage) []events.Event {
	d.shown = append(d.shown, fingerprint(raw))
	return d.msgs.message(pos, raw)
}

// entry reads one session-log entry.
func (d *Decoder) entry(pos string, o normalize.Object, raw []byte) []events.Event {
	typ := normalize.StrField(o, "type")
	data := o["data"]
	switch typ {
	case "message":
		return d.conversation(pos, data)
	case "tool_call":
		tc := d.msgs.call(data)
		if normalize.AsObjectShared(data) == nil || (tc.ID == "" && tc.Name == "") {
			return []events.Event{badRecord(pos, raw, "a tool call without id or name")}
		}
		if tc.ID != "" {
			d.msgs.names.Put(tc.ID, tc.Name)
		}
		return []events.Event{{Kind: events.KindPreToolCall, Tool: &events.ToolEvent{Call: tc, Name: tc.Name}}}
	case "tool_result":
		r := normalize.AsObjectShared(data)
		if r == nil {
			return []events.Event{badRecord(pos, raw, "a tool result that is not an object")}
		}
		return []events.Event{d.msgs.result(normalize.FirstStr(r, "callId", "call_id", "tool_call_id", "toolCallId"), r)}
	case "checkpoint":
		return d.checkpoint(pos, data, raw)
	case "compaction":
		c := normalize.AsObjectShared(data)
		text := "Context compacted"
		if n, ok := normalize.Int(c["compactedCount"]); ok {
			text += fmt.Sprintf(": %d messages summarised", n)
		}
		if s := normalize.StrField(c, "summary"); s != "" {
			text += ".\n" + s
			d.msgs.summaries.Add(strings.TrimSpace(s))
		}
		return []events.Event{notice(events.NoticeContext, text)}
	case "metadata":
		text := "Session metadata"
		if m := normalize.AsObjectShared(data); m != nil {
			if s := summary(m); s != "" {
				text += ": " + s
			}
		} else if !normalize.IsNull(data) {
			text += ": " + events.Excerpt(data, 120)
		}
		return []events.Event{notice(events.NoticeInfo, text)}
	}
	return []events.Event{notice(events.NoticeInfo,
		fmt.Sprintf("%s: an entry of unknown type %q: %s", pos, events.Excerpt([]byte(typ), 40), events.Excerpt(raw, 120)))}
}

// checkpoint reads a checkpoint entry: the whole conversation at that
// point. Its messages that were shown already, in the same order, are
// skipped; the others are shown. When it leaves out messages that were
// shown (the context was compacted, or an earlier checkpoint restored), a
// notice says so.
func (d *Decoder) checkpoint(pos string, data json.RawMessage, raw []byte) []events.Event {
	cp := normalize.AsObjectShared(data)
	list := normalize.AsListShared(cp["messages"])
	if cp == nil || list == nil {
		return []events.Event{badRecord(pos, raw, "a checkpoint without messages")}
	}
	if !normalize.IsNull(cp["metrics"]) {
		d.metrics = bytes.Clone(cp["metrics"]) // kept past the line's buffer
	}
	before := len(d.shown)
	fps := make([]uint64, len(list))
	for i, m := range list {
		fps[i] = fingerprint(m)
	}
	at := d.positions(fps)
	var fresh []int
	kept, next := 0, 0
	for i, fp := range fps {
		// The first place at or after next where this message was shown.
		if p := at[fp]; len(p) > 0 && p[len(p)-1] >= next {
			j := sort.SearchInts(p, next)
			kept++
			next = p[j] + 1
			continue
		}
		fresh = append(fresh, i)
	}
	var out []events.Event
	if kept < before {
		name := normalize.FirstStr(cp, "label", "id")
		if name == "" {
			name = pos
		}
		if it, ok := normalize.Int(cp["iteration"]); ok {
			name += fmt.Sprintf(" (iteration %d)", it)
		}
		out = append(out, notice(events.NoticeContext, fmt.Sprintf(
			"Checkpoint %s keeps %d of the %d messages shown before it (the context was compacted or an earlier checkpoint restored).",
			name, kept, before)))
	}
	for _, i := range fresh {
		out = append(out, d.conversation(fmt.Sprintf("%s, message %d", pos, i+1), list[i])...)
	}
	return out
}

// positions are the places in shown of the messages with fingerprints
// fps, in order: an index of what one checkpoint can keep, made when it
// comes rather than kept for every message.
func (d *Decoder) positions(fps []uint64) map[uint64][]int {
	at := make(map[uint64][]int, len(fps))
	for _, fp := range fps {
		at[fp] = nil
	}
	for i, fp := range d.shown {
		if p, ok := at[fp]; ok {
			at[fp] = append(p, i)
		}
	}
	return at
}

// fingerprint identifies a message by what it says (role, content, tool
// calls, the call it answers), not by its metadata.
func fingerprint(raw json.RawMessage) uint64 {
	h := uint64(fnvOffset)
	o := normalize.AsObjectShared(raw)
	if o == nil {
		for _, c := range raw {
			h = (h ^ uint64(c)) * fnvPrime
		}
		return h
	}
	w := func(s string) { // FNV-1a of s and a 0 byte, as hash/fnv's New64a
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * fnvPrime
		}
		h *= fnvPrime
	}
	w(normalize.StrField(o, "role"))
	w(valueText(o["content"]))
	w(normalize.FirstStr(o, "toolCallId", "tool_call_id"))
	calls := normalize.AsListShared(o["toolCalls"])
	if calls == nil {
		calls = normalize.AsListShared(o["tool_calls"])
	}
	for _, c := range calls {
		co := normalize.AsObjectShared(c)
		w(normalize.StrField(co, "id"))
		w(normalize.StrField(co, "name"))
	}
	return h
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// summary is a short one-line rendering of an object's scalar fields
// ("key=value …", one level of nesting as "outer.key"), for notices about
// records perch does not show otherwise.
func summary(o normalize.Object, skip ...string) string {
	const max = 200
	var b strings.Builder
	add := func(k string, raw json.RawMessage) {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] == '{' || raw[0] == '[' || b.Len() > max {
			return
		}
		v := valueText(raw)
		if v == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(events.Excerpt([]byte(strings.Join(strings.Fields(v), " ")), 60))
	}
	keys := sortedKeys(o)
	for _, k := range keys {
		if contains(skip, k) {
			continue
		}
		add(k, o[k])
	}
	for _, k := range keys {
		if contains(skip, k) {
			continue
		}
		if in := normalize.AsObjectShared(o[k]); in != nil {
			for _, ik := range sortedKeys(in) {
				add(k+"."+ik, in[ik])
			}
		}
	}
	s := b.String()
	if len(s) > max {
		s = events.Excerpt([]byte(s), max)
	}
	return s
}

func sortedKeys(o normalize.Object) []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
