package cli

import (
	"fmt"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/transcript"
)

// exportStream writes an export's items as soon as the timeline settles
// them (events.Timeline.Settled) and lets them go, so that exporting a
// day-long session holds only what is not settled yet, not the session.
// After a Reset (the backend read the session again) the new timeline's
// first items are the ones already written, taken by their position, as
// tail takes them.
type exportStream struct {
	w       transcript.Writer
	written int // items of the session written so far
}

// settled writes the items tl settled and releases them.
func (e *exportStream) settled(tl *events.Timeline) error {
	n := tl.Settled()
	if err := e.items(tl, n); err != nil {
		return err
	}
	tl.Release(n)
	return nil
}

// items writes the first n items of tl not written yet.
func (e *exportStream) items(tl *events.Timeline, n int) error {
	for i, it := range tl.Items()[:n] {
		if tl.Released()+i < e.written {
			continue
		}
		if err := e.w.Item(it); err != nil {
			return err
		}
		e.written++
	}
	return nil
}

// endShort writes the rest of tl and its closing state after a last
// notice that the transcript is incomplete (a notice line in jsonl, a
// line in md), so that what was written still parses.
func (e *exportStream) endShort(tl *events.Timeline, level events.NoticeLevel, why string) error {
	tl.Apply(events.Event{Kind: events.KindNotice, Level: level, Text: why + ": this transcript is incomplete"})
	return e.end(tl)
}

// saySpillErr says once on stderr that a timeline's long texts stayed in
// memory because its spill file failed.
func saySpillErr(env Env, tl *events.Timeline) {
	if tl != nil && tl.SpillErr() != nil {
		fmt.Fprintf(env.Stderr, "perch: long outputs kept in memory: %v\n", tl.SpillErr())
	}
}

// end writes the rest of tl and its closing state.
func (e *exportStream) end(tl *events.Timeline) error {
	if err := e.items(tl, tl.Len()); err != nil {
		return err
	}
	return e.w.End(tl)
}
