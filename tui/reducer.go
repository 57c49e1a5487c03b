package tui

import (
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/spill"
)

// reducer is what the attach view needs of events.Timeline (the domain
// logic lives there, not in the UI).
type reducer interface {
	Apply(events.Event) bool
	// Items is every item, frozen ones read back: for tests; views use
	// Len and At, which read back only what they show.
	Items() []*events.Item
	Len() int
	// At is item i; a frozen one is read back (events.Timeline.Freeze).
	At(i int) *events.Item
	// Peek is At for a pass that lets each item go at once (search).
	Peek(i int) *events.Item
	// ColdItems reads the frozen items from another goroutine (a
	// search's command).
	ColdItems() events.ColdItems
	// Freeze moves settled items far from the end out of memory.
	Freeze(keep int)
	// SettleAfter settles items without a run end after them (a file).
	SettleAfter(n int)
	Queue() []events.QueuedMessage
	Status() events.RunStatus
	Todos() []events.Todo
	Meta() events.Meta
	Version() uint64
	SetTask(events.Task)
	NoteSent(id, text string, queued bool)
	NoteCancelled(pending []events.QueuedMessage)
}

func newReducer() reducer { return events.NewTimeline() }

// hotItemsDefault is how many of the last items a session keeps in
// memory; the settled items before them are frozen to the spill file and
// read back when shown, so that a day-long session holds what a short
// one does (events.Timeline.Freeze). A screen shows a few dozen.
const hotItemsDefault = 2000

// spillFile is the spill file of the attached session: one per session,
// kept across the resets of its timeline (the file only grows; what a
// reset dropped is never read again) and closed, which removes it, when
// another session is attached, the list is shown or perch exits.
type spillFile struct {
	open func(session string) *spill.File // nil: memory only
	min  int                              // events.SpillMin when 0; tests spill everything
	id   string
	f    *spill.File
}

// timeline is a fresh timeline for session id that keeps its long texts
// in the session's spill file; id "" (no session) closes the file.
func (s *spillFile) timeline(id string) reducer {
	tl := events.NewTimeline()
	if s == nil || s.open == nil {
		return tl
	}
	if s.f != nil && s.id != id {
		s.close()
	}
	if id == "" {
		return tl
	}
	if s.f == nil {
		s.f, s.id = s.open(id), id
	}
	tl.SetBodyStore(s.f, events.SpillOptions{Min: s.min})
	return tl
}

// close removes the file (nothing of it is read afterwards: a view that
// still asked would be told the text is gone).
func (s *spillFile) close() {
	if s == nil || s.f == nil {
		return
	}
	s.f.Close()
	s.f, s.id = nil, ""
}
