package cli

import (
	"context"
	"errors"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/backend/maria"
	mariab "github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/tui"
	"github.com/perch-tui/perch/tui/bridge"
)

// The commands that open the terminal UI (no command, attach, demo,
// replay on a terminal) build a tui.Config and a tui.Backend and hand them
// to tui.Run through Env.runUI.

// runUI runs the terminal UI on b until the user quits it, or hands b and
// c to the test that replaced it.
func (env Env) runUI(ctx context.Context, b tui.Backend, c tui.Config) error {
	if env.openUI != nil {
		return env.openUI(ctx, b, c)
	}
	return tui.Run(ctx, b, c)
}

// prepareUI starts the UI's one-time work (tui.Prepare) as soon as a
// command knows that it opens the UI, so that it runs while the command
// probes the server or resolves the task, which mostly wait for the
// network.
func prepareUI() { tui.Prepare() }

// uiConfig is what every command gives the UI: the environment and the
// theme. The UI bounds the process's memory while a replay comes in only
// when the command owns the process.
func uiConfig(env Env, theme string) tui.Config {
	return tui.Config{Theme: theme, Cwd: env.Cwd, Getenv: env.Getenv, Home: env.Home, Unsent: env.Stderr,
		BoundMemory: env.OwnsProcess}
}

// withOutbox keeps what the user sends in store and delivers it through
// via.
func withOutbox(c tui.Config, store outbox.Store, via backend.Backend) tui.Config {
	c.Outbox = &tui.Outbox{Store: store, Backend: via}
	return c
}

// runLive shows maria's daemon behind cl through the bridge, as any
// backend.
func (env Env) runLive(ctx context.Context, cl *mariab.Client, c tui.Config) error {
	return env.runUI(ctx, bridge.New(maria.New(cl)), c)
}

// runBackend shows a live backend other than maria's daemon (Suna,
// pynchy): the same app, offering only what b.Capabilities allows.
func (env Env) runBackend(ctx context.Context, b backend.Backend, c tui.Config) error {
	return env.runUI(ctx, bridge.New(b), c)
}

// runReadOnly shows one source that cannot be written to (a transcript
// file) as the only task.
func (env Env) runReadOnly(ctx context.Context, src ReadOnlySource, c tui.Config) error {
	return env.runUI(ctx, readOnly{src}, c)
}

// ReadOnlySource is a task that can be read, never written: the UI offers
// no composer, no cancel and no new task on it, and shows Note instead.
type ReadOnlySource interface {
	Tasks(ctx context.Context) ([]events.Task, error)
	Task(ctx context.Context, id string) (events.Task, error)
	// StreamTaskEvents hands over the task's events, already decoded.
	StreamTaskEvents(ctx context.Context, taskID string, onEvent func(events.Event), onState func(sse.ConnState)) error
	StreamDaemon(ctx context.Context, onFrame func(events.Frame), onState func(sse.ConnState)) error
	// Note says what the source is ("replay of x.json — read-only").
	Note() string
}

var errReadOnly = errors.New("this is a replay of a file: it is read-only")

// readOnly is a tui.Backend (and tui.EventStreamer) over a source that
// cannot be written to: it refuses every change, and its capabilities tell
// the UI not to offer any.
type readOnly struct{ ReadOnlySource }

func (r readOnly) Capabilities() tui.Capabilities { return tui.Capabilities{Note: r.Note()} }

func (readOnly) CreateTask(context.Context, mariab.CreateTaskRequest) (mariab.CreateTaskResult, error) {
	return mariab.CreateTaskResult{}, errReadOnly
}

func (readOnly) Send(context.Context, string, string, bool) (mariab.SendResult, error) {
	return mariab.SendResult{}, errReadOnly
}

func (readOnly) Cancel(context.Context, string) ([]events.QueuedMessage, error) {
	return nil, errReadOnly
}

// WatchTasks: a file's one task comes from Tasks; the source says when it
// is live.
func (r readOnly) WatchTasks(ctx context.Context, _ func([]events.Task), onState func(sse.ConnState)) error {
	return r.StreamDaemon(ctx, func(events.Frame) {}, onState)
}

// compile-time checks: the UI finds these interfaces by type assertion.
var (
	_ tui.Backend = readOnly{}
	_ tui.Capable = readOnly{}
)
