package cli

import (
	"context"
	"errors"
	"io"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
)

// UI is perch's terminal UI as the commands see it.
//
// Package cli does not import the UI: perch-ui's main hands one in through
// Env.UI. Go runs the package initialisation of every package linked into
// a binary, whether or not a command uses it, and the UI's libraries
// (glamour, chroma's lexers and styles, goldmark, bluemonday, bubbletea,
// lipgloss) spend some 40 ms of processor time there. So perch is two
// programs: perch, which links none of them, and perch-ui, which links
// them and becomes perch's process whenever a command opens the UI
// (Env.StartUI; docs/performance.md, "Startup").
type UI interface {
	// Live shows the daemon behind cl: the task list, or o.TaskID.
	Live(ctx context.Context, cl *client.Client, o UIOptions) error
	// Backend shows a live backend other than maria's daemon (Suna,
	// pynchy): the same app, offering only what b.Capabilities allows.
	Backend(ctx context.Context, b backend.Backend, o UIOptions) error
	// ReadOnly shows one source that cannot be written to (a transcript
	// file) as the only task.
	ReadOnly(ctx context.Context, src ReadOnlySource, o UIOptions) error
}

// Preparer is implemented by a UI with one-time work to start before it is
// shown (tables its first frame needs): env.ui calls Prepare as soon as a
// command knows that it opens the UI, so that the work runs while the
// command probes the server or resolves the task, which mostly wait for
// the network.
type Preparer interface {
	Prepare()
}

// UIOptions is how a command opens the UI.
type UIOptions struct {
	TaskID string // attach at start; "" opens the task list
	Theme  string // auto, dark or light
	Model  string // model for tasks created in the UI ("" = the daemon's)
	Cwd    string
	Home   string
	Getenv func(string) string
	// Unsent receives the exit report.
	Unsent io.Writer
	// OutboxStore and OutboxBackend keep and deliver what the user sends;
	// a nil store keeps messages in memory.
	OutboxStore   outbox.Store
	OutboxBackend backend.Backend
	// Tasks is the task list as perch just read it (maria's probe carries
	// the whole list), shown at once instead of being asked for again; nil
	// when perch has none.
	Tasks []events.Task
}

// ReadOnlySource is a task that can be read, never written: the UI offers
// no composer, no cancel and no new task on it, and shows Note instead.
type ReadOnlySource interface {
	Tasks(ctx context.Context) ([]events.Task, error)
	Task(ctx context.Context, id string) (events.Task, error)
	// StreamTaskEvents hands over the task's events, already decoded.
	StreamTaskEvents(ctx context.Context, taskID string, onEvent func(events.Event), onState func(client.ConnState)) error
	StreamDaemon(ctx context.Context, onFrame func(events.Frame), onState func(client.ConnState)) error
	// Note says what the source is ("replay of x.json — read-only").
	Note() string
}

// errNoUI is what the UI commands say when there is neither a UI nor a
// way to start one (tests).
var errNoUI = errors.New("this perch has no terminal UI: use the scriptable commands (perch --help), or perch-ui")

// ui returns env's UI. Without one it hands the process over to the
// program that has it (Env.StartUI, with extra in its environment), which
// on success never returns.
func (env Env) ui(extra ...string) (UI, error) {
	if env.UI != nil {
		if p, ok := env.UI.(Preparer); ok {
			p.Prepare()
		}
		return env.UI, nil
	}
	if env.StartUI != nil {
		if err := env.StartUI(extra...); err != nil {
			return nil, err
		}
	}
	return nil, errNoUI
}
