package maria

import (
	"context"
	"errors"
	"net/http"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// serverName is how stream errors name the daemon.
const serverName = "a maria daemon"

// StreamTask follows a task's events (GET /task/{id}/events) until ctx is
// cancelled or the daemon refuses the stream for good. See stream.
func (c *Client) StreamTask(ctx context.Context, taskID string, onFrame func(events.Frame), onState func(sse.ConnState)) error {
	return c.stream(ctx, c.endpoint("task", taskID, "events"), onFrame, onState, nil, false)
}

// StreamTaskActivity is StreamTask that also keeps a up to date with the
// bytes coming in, for a caller that waits for the stream to go quiet.
// onFrame borrows each frame's Data: it is read in the stream's buffer,
// valid until onFrame returns (sse.Config.Borrow).
func (c *Client) StreamTaskActivity(ctx context.Context, taskID string, onFrame func(events.Frame), onState func(sse.ConnState), a *sse.Activity) error {
	return c.stream(ctx, c.endpoint("task", taskID, "events"), onFrame, onState, a, true)
}

// StreamDaemon follows the daemon-wide events (GET /events): task list
// snapshots, task status changes, auth events. See stream.
func (c *Client) StreamDaemon(ctx context.Context, onFrame func(events.Frame), onState func(sse.ConnState)) error {
	return c.stream(ctx, c.endpoint("events"), onFrame, onState, nil, false)
}

// stream follows u with sse.Subscribe (reconnecting like a browser's
// EventSource, forever, until ctx ends or the daemon refuses the stream for
// good), with the client's headers, transport and timing. A refusal is
// reported, in states and as the result, as an *APIError decoded from the
// daemon's error body, like every other call's.
func (c *Client) stream(ctx context.Context, u string, onFrame func(events.Frame), onState func(sse.ConnState), a *sse.Activity, borrow bool) error {
	if onState == nil {
		onState = func(sse.ConnState) {}
	}
	err := sse.Subscribe(ctx, sse.Config{
		URL:             func() string { return u },
		Header:          c.headers,
		Client:          c.streamHC,
		Activity:        a,
		Borrow:          borrow,
		Initial:         c.timing.initial,
		Max:             c.timing.max,
		CleanCloseDelay: c.timing.cleanDelay,
		Server:          serverName,
	}, onFrame, func(s sse.ConnState) {
		s.Err = apiStreamError(s.Err)
		onState(s)
	})
	return apiStreamError(err)
}

// apiStreamError turns the stream's refusal into the client's *APIError,
// decoding the daemon's own error format (its code included).
func apiStreamError(err error) error {
	var se *sse.StatusError
	if !errors.As(err, &se) {
		return err
	}
	ae := newAPIError(http.MethodGet, se.URL, se.Status, se.Body)
	if ae.Message == "" {
		ae.Message = se.Message
	}
	return ae
}
