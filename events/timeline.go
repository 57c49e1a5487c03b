package events

// Timeline is the pure reducer from decoded events to what a user sees:
// transcript items, the run status, the queue, todos and metadata. It does
// no IO; feed it with Apply and the Note* methods, in arrival order, from a
// single goroutine.
type Timeline struct {
	items   []*Item
	seen    map[string]struct{}
	tools   map[string]*Item // tool_call id -> tool item
	posts   map[string]*Item // PostToolCall envelope id -> tool item (for Pruned)
	queue   []QueuedMessage
	sent    map[string]string // message id -> text the client sent
	todos   []Todo
	meta    Meta
	status  RunStatus
	stopped bool // the daemon says no task process exists
	version uint64
}

// NewTimeline returns an empty timeline.
func NewTimeline() *Timeline {
	return &Timeline{
		seen:  make(map[string]struct{}),
		tools: make(map[string]*Item),
		posts: make(map[string]*Item),
		sent:  make(map[string]string),
	}
}

// Items returns the transcript in order. The slice and items are owned by
// the timeline: read them, don't keep them across Apply calls.
func (t *Timeline) Items() []*Item { return t.items }

// Len is the number of items.
func (t *Timeline) Len() int { return len(t.items) }

// Queue returns the pending messages, in queue order.
func (t *Timeline) Queue() []QueuedMessage { return t.queue }

// Status is the derived run status.
func (t *Timeline) Status() RunStatus { return t.status }

// Todos is the agent's latest todo list.
func (t *Timeline) Todos() []Todo { return t.todos }

// Meta returns model, tools, context size and token totals.
func (t *Timeline) Meta() Meta { return t.meta }

// Version grows whenever anything in the timeline changes.
func (t *Timeline) Version() uint64 { return t.version }

// Seen reports whether an event id was already applied.
func (t *Timeline) Seen(id string) bool { _, ok := t.seen[id]; return ok }
