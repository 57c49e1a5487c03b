package client

import (
	"context"

	"github.com/perch-tui/perch/events"
)

// OptionFollower is implemented by backends that can follow a session
// with FollowOptions (maria). Perch's scriptable commands use it where
// it is offered: export waits for the run's end as the server says it,
// record writes the wire frames. A backend that implements it honours
// every option, or returns an error that wraps ErrUnsupported for one it
// cannot.
type OptionFollower interface {
	// FollowWith is Follow with options; each Step is an Update and,
	// with Frames, the frame it came from.
	FollowWith(ctx context.Context, sessionID string, o FollowOptions, on func(Step)) error
}

// FollowOptions are what a consumer may ask of a follow beyond
// Backend.Follow's contract.
type FollowOptions struct {
	// UntilIdle: Synced marks only the points where the history is in
	// and the server, asked then, says the session is not running: the
	// stream may lag behind a run that just started. Synced may come
	// several times.
	UntilIdle bool
	// Frames: every frame of the session's stream makes a Step that
	// carries it, even one that brought nothing new (perch record writes
	// the wire frames, which perch replay reads back).
	Frames bool
}

// Step is one step of FollowWith: an Update and, with
// FollowOptions.Frames, the wire frame it was decoded from.
type Step struct {
	Update
	// Frame is the wire frame of this step (nil for a state or Synced step,
	// and without FollowOptions.Frames).
	Frame *events.Frame
}
