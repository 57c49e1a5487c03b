package maria

import (
	"strconv"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/idset"
)

// Decoder reads one maria task stream, frame by frame, into events the
// timeline can apply as they come. It holds what is maria's alone:
//
//   - maria replays a task's whole log on every connection (and appends it
//     again when a stopped task resumes), so events already seen are
//     dropped: by envelope id, or — for events without one — by their
//     position in the replay (the k-th id-less event of a connection is the
//     k-th seen before when its bytes are the same);
//   - frames that are not maria's (a foreign or missing event name) are
//     counted once per replay position too, so a reconnect does not count
//     them again;
//   - the documented dialect reports one reply twice (MessageAdded, then
//     RequestCompleted); the second report is given the first one's id, so
//     it completes that turn instead of adding one.
//
// Call Reconnected when a new connection starts replaying the log.
type Decoder struct {
	// seen holds every envelope id (hashed, see idset): a day-long
	// task has a hundred thousand of them.
	seen       idset.Set
	anon       []uint64 // fingerprints of id-less events, in order
	anonPos    int
	foreign    []uint64 // fingerprints of foreign frames, in order
	foreignPos int
	last       *report // the last assistant report, for the docs dialect's pair
}

// report is what pairing the docs dialect's two reports of a reply needs.
type report struct {
	id, text, variant string
	calls             []events.ToolCall
	paired            bool
}

// NewDecoder returns a decoder for one task stream.
func NewDecoder() *Decoder { return &Decoder{} }

// Reconnected tells the decoder that a new connection replays the log from
// its start.
func (d *Decoder) Reconnected() { d.anonPos, d.foreignPos = 0, 0 }

// Decode turns one frame into zero or one event: nothing when the frame
// repeats what an earlier connection delivered.
func (d *Decoder) Decode(f events.Frame) []events.Event { return d.Accept(Decode(f)) }

// Accept is Decode for a frame already decoded by Decode (perhaps on
// another goroutine): Decode is pure, the replay bookkeeping here is not,
// so frames must be accepted in their order.
func (d *Decoder) Accept(ev events.Event) []events.Event {
	if !d.firstSighting(ev) {
		return nil
	}
	switch ev.Kind {
	case events.KindUserMessage:
		d.last = nil
	case events.KindAssistantMessage:
		d.pair(&ev)
	}
	return []events.Event{ev}
}

func (d *Decoder) firstSighting(ev events.Event) bool {
	if ev.Kind == events.KindForeign || ev.Dialect == events.DialectDaemon {
		return positional(&d.foreign, &d.foreignPos, ev.Fingerprint)
	}
	switch ev.Kind {
	case events.KindQueueSnapshot, events.KindTasksSynced, events.KindTaskChanged, events.KindAuth:
		return true // state snapshots: idempotent, the latest applies
	}
	if ev.ID != "" {
		return !d.seen.Seen(ev.ID)
	}
	if ev.Fingerprint == 0 {
		return true
	}
	return positional(&d.anon, &d.anonPos, ev.Fingerprint)
}

// positional reports whether fp is new at the current replay position of
// list, and records it. When the log diverges from what was seen (another
// daemon?), everything from there on is kept.
func positional(list *[]uint64, pos *int, fp uint64) bool {
	p := *pos
	*pos++
	if p < len(*list) {
		if (*list)[p] == fp {
			return false
		}
		*list = (*list)[:p]
	}
	*list = append(*list, fp)
	return true
}

// pair gives the docs dialect's second report of a reply the id of the
// first, so that it completes it.
func (d *Decoder) pair(ev *events.Event) {
	if l := d.last; l != nil && l.secondReport(ev) {
		l.paired = true
		ev.ID = l.id
		return
	}
	if ev.ID == "" && (ev.Variant == "MessageAdded" || ev.Variant == "RequestCompleted") {
		// A reply without an id still needs one for its second report
		// to find it: a stable one from its bytes.
		ev.ID = "reply-" + strconv.FormatUint(ev.Fingerprint, 16)
	}
	d.last = &report{id: ev.ID, text: ev.Text, variant: ev.Variant, calls: ev.ToolCalls}
}

// secondReport tells whether ev is the other report of the reply l is: the
// same text, the other variant, and the same calls (or none in one of them).
func (l *report) secondReport(ev *events.Event) bool {
	if l.paired || l.text != ev.Text {
		return false
	}
	if !(l.variant == "MessageAdded" && ev.Variant == "RequestCompleted") &&
		!(l.variant == "RequestCompleted" && ev.Variant == "MessageAdded") {
		return false
	}
	if len(l.calls) == 0 || len(ev.ToolCalls) == 0 {
		return true // one report left the calls out
	}
	if len(l.calls) != len(ev.ToolCalls) {
		return false
	}
	for i, c := range l.calls {
		if c.ID != ev.ToolCalls[i].ID || c.Name != ev.ToolCalls[i].Name {
			return false
		}
	}
	return true
}
