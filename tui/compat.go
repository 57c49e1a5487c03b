package tui

import (
	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// Local names for the client types the Backend speaks (aliases: the
// bridge and the file sources use the client's types).
type (
	connState         = sse.ConnState
	createTaskRequest = maria.CreateTaskRequest
	createTaskResult  = maria.CreateTaskResult
	sendResult        = maria.SendResult
)

// errNotRunning is what Cancel reports (wrapped) when the agent is idle.
var errNotRunning = backend.ErrNotRunning

func newReducer() reducer { return events.NewTimeline() }
