package pynchy

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// How a chat is followed (docs/live/pynchy.md):
//
// The history is the truth. pynchy stores most of what its stream shows as
// history rows (every message, and the thinking, tool_use, tool_result,
// result_meta and system traces), in the order the stream shows them, and
// the transcript perch builds is the one `perch import` builds from that
// history: each stored event on the stream is decoded as the history row it
// will be, at the row's position (ids are positions). What the history
// never keeps (text traces, which the reply repeats; user_input traces;
// activity) shows only as run state and queue, so a transcript never
// depends on whether perch was watching.
//
// The stream has no ids and no replay: after every (re)connect perch
// reloads the history, checks that the rows it has match it, decodes the
// rows it missed and then skips the stream events that the reload already
// held. When a run ends perch checks once more that the history holds the
// rows it decoded, in order; when it does not (a row perch could not
// place) it starts the session over from the history (Update.Reset).

// follower follows one chat.
type follower struct {
	l   *Live
	jid string
	on  func(client.Update)

	dec   *Decoder
	rows  int       // history rows decoded
	marks []rowMark // one per row decoded

	active bool
	queued []events.QueuedMessage // follow-ups piped into the run, not yet seen consumed

	tail  []uint64 // prints of the rows of the last reload that the stream may show again
	ti    int      // next tail row a repeat must match (-1: none matched yet)
	stale bool     // a reload failed: redo it before the next event
}

// Follow delivers the chat's history and then its live events.
func (l *Live) Follow(ctx context.Context, sessionID string, on func(client.Update)) error {
	t, err := l.Session(ctx, sessionID)
	if err != nil {
		return err
	}
	f := &follower{l: l, jid: t.ID, on: on}
	defer l.setActive(f.jid, false)
	rows, err := l.history(ctx, f.jid)
	if err != nil {
		return err
	}
	f.rebuild(rows, false)
	return l.subscribe(ctx, func() { f.resync(ctx) }, func(fr events.Frame) { f.frame(ctx, fr.Data) },
		func(s client.ConnState) { f.on(client.Update{State: &s}) })
}

// send hands an update to the consumer.
func (f *follower) send(u client.Update) {
	if u.Reset || len(u.Events) > 0 || u.Synced || u.State != nil {
		f.on(u)
	}
}

// rowMark identifies a decoded row, to check that a reload starts with the
// rows perch has: the hash of the row as the history returned it (cheap,
// and exact: pynchy writes the same row the same way each time), or, for a
// row perch took from the stream, its print (see rowPrint), which a later
// reload replaces by the row's hash.
type rowMark struct {
	h   uint64
	raw bool
}

func rawHash(row []byte) uint64 {
	h := fnv.New64a()
	h.Write(bytes.TrimSpace(row))
	return h.Sum64()
}

// tailPrints are the prints of the last rows of a reload, which the
// stream may show again.
func tailPrints(rows []json.RawMessage, from int) []uint64 {
	from = max(from, len(rows)-maxRepeat, 0)
	out := make([]uint64, 0, len(rows)-from)
	for _, r := range rows[from:] {
		out = append(out, rowPrint(r))
	}
	return out
}

// finished reports whether the history ends with the end of a run (the
// agent's reply, a host message, command output or a system notice), so
// that what a run left pending can be settled as an import settles it.
func finished(row []byte) bool {
	switch normalize.Str(normalize.AsObjectShared(ingest.Repair(row))["sender_name"]) {
	case "You", "thinking", "tool_use", "tool_result", "result_meta", "system":
		return false
	}
	return true
}

// working reports whether the history ends inside a run: its last row is
// a trace, which only a working agent writes, and the run's reply is not
// in yet. The stream does not say whether an agent is working when perch
// connects, and an export that waits for the run to end must not stop at
// once. (A history that ends with a person's message is not taken as a
// run: pynchy may never have started one for it.)
func working(rows []json.RawMessage) bool {
	if len(rows) == 0 {
		return false
	}
	sender := normalize.Str(normalize.AsObjectShared(ingest.Repair(rows[len(rows)-1]))["sender_name"])
	return sender != "You" && traceNames[sender]
}

// inferActive sets the agent working when the history says so (see
// working) and returns the event that shows it.
func (f *follower) inferActive(rows []json.RawMessage) []events.Event {
	if f.active || !working(rows) {
		return nil
	}
	f.active = true
	f.l.setActive(f.jid, true)
	return []events.Event{{Kind: events.KindRunState, RunStatus: events.StatusGenerating}}
}

// maxRepeat bounds the rows of a reload that the stream may show again.
const maxRepeat = 64

// rebuild decodes the whole history afresh. reset starts the consumer's
// timeline over.
func (f *follower) rebuild(rows []json.RawMessage, reset bool) {
	f.dec = NewDecoder(f.jid, "message")
	f.rows, f.marks, f.tail, f.ti = 0, f.marks[:0], nil, -1
	var evs []events.Event
	for _, r := range rows {
		evs = append(evs, f.decodeRow(r)...)
	}
	if n := len(rows); n > 0 && !f.active && finished(rows[n-1]) {
		evs = append(evs, f.dec.Flush()...)
		// The run is over, as at activity off: a call still without a
		// result (a run that failed after its tool_use) never gets one.
		evs = append(evs, events.Event{Kind: events.KindRunState, RunStatus: events.StatusIdle})
	}
	if reset {
		// The stream may still bring rows this reload held: the last ones.
		f.tail = tailPrints(rows, 0)
	}
	if inferred := f.inferActive(rows); inferred != nil {
		evs = append(evs, inferred...)
	} else if reset && f.active {
		evs = append(evs, events.Event{Kind: events.KindRunState, RunStatus: events.StatusGenerating})
	}
	if reset && f.active {
		for _, q := range f.queued {
			evs = append(evs, events.Event{Kind: events.KindMessageQueued, MessageID: q.ID, Text: q.Text})
		}
	}
	f.send(client.Update{Reset: reset, Events: evs, Synced: true})
}

func (f *follower) decodeRow(raw []byte) []events.Event {
	f.rows++
	f.marks = append(f.marks, rowMark{h: rawHash(raw), raw: true})
	return f.dec.DecodeAt(f.rows, raw)
}

// resync reloads the history after a (re)connect: rows missed while no
// stream was open are decoded; the reload's rows that the stream shows
// again are then skipped. A history that does not start with the rows
// perch has decoded is decoded again from the start.
func (f *follower) resync(ctx context.Context) {
	rows, err := f.l.history(ctx, f.jid)
	if err != nil {
		f.stale = true // retried before the next event of the chat
		return
	}
	f.stale = false
	if len(rows) < f.rows || !f.matches(rows) {
		f.rebuild(rows, true)
		return
	}
	var evs []events.Event
	start := f.rows
	for _, r := range rows[start:] {
		evs = append(evs, f.decodeRow(r)...)
	}
	if n := len(rows); n > start && !f.active && finished(rows[n-1]) {
		evs = append(evs, f.dec.Flush()...)
	}
	f.tail, f.ti = tailPrints(rows, start), -1
	evs = append(evs, f.inferActive(rows)...)
	if f.active && len(rows) > 0 && finished(rows[len(rows)-1]) {
		// The run ended while no stream was open (its activity event is
		// lost with the rest): the history ends with its reply.
		f.send(client.Update{Events: evs})
		f.activity(ctx, false)
		return
	}
	f.send(client.Update{Events: evs, Synced: true})
}

// matches reports whether the history starts with the rows decoded, in
// their order. Rows taken from the stream are then known by their hash.
func (f *follower) matches(rows []json.RawMessage) bool {
	for i := 0; i < f.rows; i++ {
		m := f.marks[i]
		if m.raw && rawHash(rows[i]) != m.h || !m.raw && rowPrint(rows[i]) != m.h {
			return false
		}
	}
	for i := range f.marks[:f.rows] {
		if !f.marks[i].raw {
			f.marks[i] = rowMark{h: rawHash(rows[i]), raw: true}
		}
	}
	return true
}

// storedTraces are the traces pynchy also keeps as history rows.
var storedTraces = map[string]bool{"thinking": true, "tool_use": true, "tool_result": true, "result_meta": true, "system": true}

// frame handles one event of the global stream.
func (f *follower) frame(ctx context.Context, data []byte) {
	data = bytes.TrimSpace(data)
	o := normalize.AsObjectShared(ingest.Repair(data))
	if o == nil || normalize.Str(o["chat_jid"]) != f.jid {
		return // another chat's, or nothing perch can place in this one
	}
	if f.stale {
		f.resync(ctx)
	}
	trace, isTrace := o["trace_type"]
	typ := normalize.Str(o["type"])
	switch {
	case isTrace && storedTraces[normalize.Str(trace)], !isTrace && typ == "message":
		f.stored(o, data)
	case isTrace && normalize.Str(trace) == "user_input":
		f.consumed(text(o["content"]))
	case typ == "agent_activity":
		if on, ok := normalize.Bool(o["active"]); ok {
			f.activity(ctx, on)
		}
	case typ == "chat_cleared":
		// pynchy's history now starts after the clear: so does perch's.
		f.rebuild(nil, true)
	}
	// Text traces (repeated by the reply), agent_input and unknown types
	// are never stored: the transcript does not show them.
}

// stored decodes an event that pynchy also stored as the next history row,
// unless the last reload held it already.
func (f *follower) stored(o normalize.Object, data []byte) {
	fp := eventPrint(o)
	if f.tail != nil {
		if f.ti < 0 {
			for j, t := range f.tail {
				if t == fp {
					f.ti = j
					break
				}
			}
		}
		if f.ti >= 0 && f.ti < len(f.tail) && f.tail[f.ti] == fp {
			f.ti++
			if f.ti == len(f.tail) {
				f.tail = nil
			}
			return
		}
		f.tail = nil // the stream has moved past the reload
	}
	f.rows++
	f.marks = append(f.marks, rowMark{h: fp})
	var evs []events.Event
	if _, isTrace := o["trace_type"]; isTrace && !f.active {
		// Only a working agent sends traces: its activity event came
		// while no stream was open.
		f.active = true
		f.l.setActive(f.jid, true)
		evs = append(evs, events.Event{Kind: events.KindRunState, RunStatus: events.StatusGenerating})
	}
	evs = append(evs, f.dec.DecodeAt(f.rows, data)...)
	if f.active && normalize.Str(o["type"]) == "message" {
		if bot, ok := normalize.Bool(o["is_bot"]); ok && !bot {
			// Piped into the working agent: queued until it reads it.
			q := events.QueuedMessage{ID: "queued-" + strconv.Itoa(f.rows), Text: text(o["content"])}
			f.queued = append(f.queued, q)
			evs = append(evs, events.Event{Kind: events.KindMessageQueued, MessageID: q.ID, Text: q.Text})
		}
	}
	f.send(client.Update{Events: evs})
}

// consumed: the agent read a piped message (its user_input trace).
func (f *follower) consumed(content string) {
	for i, q := range f.queued {
		if q.Text == content {
			f.queued = append(f.queued[:i:i], f.queued[i+1:]...)
			f.send(client.Update{Events: []events.Event{{Kind: events.KindMessageUnqueued, MessageID: q.ID}}})
			return
		}
	}
}

func (f *follower) activity(ctx context.Context, on bool) {
	f.active = on
	f.l.setActive(f.jid, on)
	if on {
		f.send(client.Update{Events: []events.Event{{Kind: events.KindRunState, RunStatus: events.StatusGenerating}}})
		return
	}
	// The run is over: what it left pending settles, and a piped message
	// it never showed reading was answered in it all the same.
	evs := f.dec.Flush()
	for _, q := range f.queued {
		evs = append(evs, events.Event{Kind: events.KindMessageUnqueued, MessageID: q.ID})
	}
	f.queued = nil
	evs = append(evs, events.Event{Kind: events.KindRunState, RunStatus: events.StatusIdle})
	f.send(client.Update{Events: evs})
	f.verify(ctx)
}

// verify checks, once a run is over, that the history holds the rows
// perch decoded, in their order: the transcript is then the history's (the
// same decoder read the same rows at the same positions). When it does
// not, the session starts over from the history. Rows stored after the run
// (a new message) are left to the stream. Either way the update it sends
// is Synced: the transcript holds the history.
func (f *follower) verify(ctx context.Context) {
	rows, err := f.l.history(ctx, f.jid)
	if err != nil {
		f.stale = true
		return
	}
	if len(rows) < f.rows || !f.matches(rows) {
		f.rebuild(rows, true)
		return
	}
	f.send(client.Update{Synced: true})
}

// Fingerprints tell a history row and the stream event it was stored from
// apart from other rows: the sender (or trace type) and the content, with
// a message's timestamp; a trace's data is compared as decoded JSON, so
// key order and spacing do not matter.

func rowPrint(raw []byte) uint64 {
	o := normalize.AsObjectShared(ingest.Repair(bytes.TrimSpace(raw)))
	sender := normalize.Str(o["sender_name"])
	content := text(o["content"])
	if traceNames[sender] {
		return print3("t", sender, canonical([]byte(content), nil))
	}
	return print3("m", sender, content+"\x00"+normalize.Str(o["timestamp"]))
}

func eventPrint(o normalize.Object) uint64 {
	if tt, ok := o["trace_type"]; ok {
		data := make(map[string]json.RawMessage, len(o))
		for k, v := range o {
			data[k] = v
		}
		return print3("t", normalize.Str(tt), canonical(nil, data))
	}
	return print3("m", normalize.Str(o["sender_name"]), text(o["content"])+"\x00"+normalize.Str(o["timestamp"]))
}

// canonical is a JSON object's members without the envelope keys (the
// stream adds them to a trace's data), sorted, each value compacted.
func canonical(raw []byte, members map[string]json.RawMessage) string {
	if members == nil {
		if err := json.Unmarshal(ingest.Repair(bytes.TrimSpace(raw)), &members); err != nil {
			return "\x01" + string(raw)
		}
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		switch k {
		case "type", "chat_jid", "trace_type":
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		var v any
		if json.Unmarshal(ingest.Repair(members[k]), &v) == nil {
			c, _ := json.Marshal(v)
			b.Write(c)
		} else {
			b.Write(members[k])
		}
		b.WriteByte(0)
	}
	return b.String()
}

func print3(a, b, c string) uint64 {
	h := fnv.New64a()
	for _, s := range []string{a, b, c} {
		h.Write([]byte(s))
		h.Write([]byte{0xff})
	}
	return h.Sum64()
}
