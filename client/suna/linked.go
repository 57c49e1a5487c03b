package suna

import "github.com/perch-tui/perch/events"

// A tool result follows its call. In Suna's current pipeline a tool runs
// while the reply that calls it is still streaming, and the reply's row is
// written when the reply ends: a thread's history can hold a tool row (and
// its tool_started/tool_completed status rows) older than the assistant
// row that makes the call. Put in time order, the result would come first,
// without its call's arguments. So a history's tool event whose call was
// not seen yet waits for the assistant turn that makes it, by the linkage
// Suna records: the tool row's assistant_message_id, else its tool_call_id
// among a turn's calls. A live stream (Deltas) shows it as it comes: there
// the call's arguments have streamed already.

// waiting is a tool event held until its call is seen.
type waiting struct {
	callID string
	turnID string // the assistant row it names, "" when it names none
	ev     events.Event
}

// waits says whether a tool event of call callID, from a row that names
// the assistant row turnID (or ""), must wait for its call.
func (d *Decoder) waits(callID, turnID string) bool {
	if d.Deltas {
		return false
	}
	if turnID != "" {
		return !d.assistantRows.Has(turnID)
	}
	if callID == "" || d.called.Has(callID) {
		return false
	}
	_, open := d.argsOf(callID)
	return !open
}

// emitTool emits a tool event, or holds it until its call is seen. On a
// live stream, a tool that runs while its turn is open comes after that
// turn: a turn that showed nothing yet (tool-call chunks only) is opened
// first, with an empty delta.
func (d *Decoder) emitTool(callID, turnID string, ev events.Event) {
	if d.waits(callID, turnID) {
		d.waiting = append(d.waiting, waiting{callID: callID, turnID: turnID, ev: ev})
		return
	}
	if t := d.turn; d.Deltas && t != nil && !t.deltas {
		t.deltas = true
		d.out = append(d.out, events.Event{Kind: events.KindTextDelta, ID: t.id})
	}
	d.emit(ev)
}

// calledBy notes the calls of an emitted turn (from the row rowID, or "")
// and emits, after it, the tool events that waited for them.
func (d *Decoder) calledBy(rowID string, calls []events.ToolCall) {
	for _, c := range calls {
		if c.ID != "" {
			d.called.Add(c.ID)
		}
	}
	if len(d.waiting) == 0 {
		return
	}
	kept := d.waiting[:0]
	for _, w := range d.waiting {
		if (w.turnID != "" && w.turnID == rowID) || (w.callID != "" && d.called.Has(w.callID)) {
			d.out = append(d.out, w.ev)
			continue
		}
		kept = append(kept, w)
	}
	clear(d.waiting[len(kept):])
	d.waiting = kept
}

// releaseWaiting emits the tool events whose call never came (the run is
// over: a user turn follows, or the input ends), where they stand.
func (d *Decoder) releaseWaiting() {
	for _, w := range d.waiting {
		d.out = append(d.out, w.ev)
	}
	clear(d.waiting)
	d.waiting = d.waiting[:0]
}
