package outbox

import (
	"context"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// stubBackend is the part of client.Backend the Deliverer's fakes do not
// play: no sessions to list or follow. caps are the capabilities; the
// zero value is a server that queues follow-ups (maria-like).
type stubBackend struct {
	noQueue bool // a server without a queue (Suna-like): a send starts a run
}

func (stubBackend) Name() string { return "fake" }
func (stubBackend) URL() string  { return "http://127.0.0.1:1/v1" }
func (s stubBackend) Capabilities() client.Capabilities {
	return client.Capabilities{Send: true, ServerQueue: !s.noQueue}
}
func (stubBackend) Sessions(context.Context) ([]events.Task, error) {
	return nil, client.ErrUnsupported
}
func (stubBackend) Session(context.Context, string) (events.Task, error) {
	return events.Task{}, client.ErrUnsupported
}
func (stubBackend) Follow(context.Context, string, func(client.Update)) error {
	return client.ErrUnsupported
}
func (stubBackend) Cancel(context.Context, string) ([]events.QueuedMessage, error) {
	return nil, client.ErrUnsupported
}
func (stubBackend) Create(context.Context, client.CreateRequest) (events.Task, error) {
	return events.Task{}, client.ErrUnsupported
}
