package maria

import (
	"hash/maphash"
	"slices"
	"strconv"

	"github.com/perch-tui/perch/events"
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
	// seen holds a 64-bit hash of every envelope id, not the id: a
	// day-long task has a hundred thousand of them, and the strings would
	// stay alive here after the timeline let their items go. Two ids of
	// one task sharing a hash (about 1 in 10^9 at a million events) would
	// hide the second event. The recent hashes are in a map, the older in
	// a sorted slice (8 bytes each, a third of a map's).
	seen       map[uint64]struct{}
	seenSorted []uint64
	seed       maphash.Seed
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
func NewDecoder() *Decoder {
	return &Decoder{seen: make(map[uint64]struct{}), seed: maphash.MakeSeed()}
}

// seenRecent is how many hashes the map holds before they move to the
// sorted slice.
const seenRecent = 4096

// sawID reports whether the envelope id was seen before, and records it.
func (d *Decoder) sawID(id string) bool {
	h := maphash.String(d.seed, id)
	if _, dup := d.seen[h]; dup {
		return true
	}
	if _, dup := slices.BinarySearch(d.seenSorted, h); dup {
		return true
	}
	d.seen[h] = struct{}{}
	if len(d.seen) >= seenRecent {
		d.seenSorted = mergeSorted(d.seenSorted, d.seen)
		clear(d.seen)
	}
	return false
}

// mergeSorted adds the keys of m to the sorted slice s, in place from its
// end: linear in len(s), no second slice.
func mergeSorted(s []uint64, m map[uint64]struct{}) []uint64 {
	add := make([]uint64, 0, len(m))
	for k := range m {
		add = append(add, k)
	}
	slices.Sort(add)
	i, j := len(s)-1, len(add)-1
	s = append(s, add...) // room for the merge; the tail is overwritten
	for k := len(s) - 1; j >= 0; k-- {
		if i >= 0 && s[i] > add[j] {
			s[k] = s[i]
			i--
		} else {
			s[k] = add[j]
			j--
		}
	}
	return s
}

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
		return !d.sawID(ev.ID)
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
