package tui

import "github.com/perch-tui/perch/events"

// reducer is what the attach view needs of events.Timeline (the domain
// logic lives there, not in the UI).
type reducer interface {
	Apply(events.Event) bool
	Items() []*events.Item
	Len() int
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
