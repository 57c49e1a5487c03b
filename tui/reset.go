package tui

import "github.com/perch-tui/perch/events"

// A backend may be unable to continue a task without duplicates or gaps
// (pynchy's stream has no ids: after a reconnect its history is loaded
// again). It then starts the timeline over (backend.Update's Reset), and
// follow puts resetEvent ahead of the task from its start. The reset
// travels in the event order, so a batch holding events from before and
// after it is applied correctly.
//
// The marker is a notice whose kind no decoder produces (decoders set
// NoticeKind from perch's own constants, never from the wire), so a server
// cannot forge it.
const (
	resetVariant = "perch.timeline.reset"
	resetNotice  = "perch.timeline.reset"
)

// resetEvent is the event that tells the UI to drop the task's timeline
// built so far (the task itself stays) and build it again from the events
// that follow.
func resetEvent() events.Event {
	return events.Event{Kind: events.KindNotice, Variant: resetVariant, NoticeKind: resetNotice}
}

// isResetEvent says whether ev is resetEvent.
func isResetEvent(ev *events.Event) bool {
	return ev.Kind == events.KindNotice && ev.NoticeKind == resetNotice && ev.Variant == resetVariant
}

// restartTimeline drops the attached task's timeline and what was drawn
// from it; the task, the composer and the held messages stay.
// newTimeline is the timeline of session id: its long texts in the
// session's spill file, and, for a file, its items settled (and frozen)
// without run ends, which most files do not have.
func (m *Model) newTimeline(id string) reducer {
	tl := m.spill.timeline(id)
	if m.caps.Replay {
		tl.SettleAfter(events.FileSettleLag)
	}
	return tl
}

func (m *Model) restartTimeline() {
	m.tl = m.newTimeline(m.task.ID)
	m.tl.SetTask(m.task)
	m.tr = newTranscript()
	m.expanded = make(map[*events.Item]bool)
	m.search = searchState{}
	m.rows, m.owners = m.rows[:0], m.owners[:0]
}
