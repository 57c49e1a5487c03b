package app

import (
	"context"
	"errors"
	"os"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/cli"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/termprofile"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/tui"
	"github.com/perch-tui/perch/tui/bridge"
)

// terminalUI is the terminal UI handed to the commands: package cli does not
// import tui, so that the perch program links none of the UI's libraries
// (see cli.UI); perch-ui links this package.
type terminalUI struct{ o Options }

// Live shows maria's daemon behind cl through the bridge, as any backend.
func (u terminalUI) Live(ctx context.Context, cl *maria.Client, o cli.UIOptions) error {
	u.started()
	return tui.Run(ctx, bridge.New(maria.New(cl)), u.config(o))
}

// Backend shows a live backend through the bridge; its outbox is o's (the
// same files perch send and queue use).
func (u terminalUI) Backend(ctx context.Context, b backend.Backend, o cli.UIOptions) error {
	u.started()
	return tui.Run(ctx, bridge.New(b), u.config(o))
}

func (u terminalUI) ReadOnly(ctx context.Context, src cli.ReadOnlySource, o cli.UIOptions) error {
	u.started()
	return tui.Run(ctx, readOnly{src}, u.config(o))
}

// started tells Options.OnStart that the UI takes the terminal now.
func (u terminalUI) started() {
	if u.o.OnStart != nil {
		u.o.OnStart()
	}
}

// Prepare starts the UI's one-time work early (tui.Prepare).
func (terminalUI) Prepare() { tui.Prepare() }

func (u terminalUI) config(o cli.UIOptions) tui.Config {
	c := tui.Config{TaskID: o.TaskID, Theme: o.Theme, Model: o.Model, Cwd: o.Cwd, Home: o.Home, Getenv: o.Getenv, Unsent: o.Unsent,
		Tasks:       o.Tasks,
		BoundMemory: true} // only perch's own process runs the UI
	switch {
	case u.o.Profile != nil:
		p := *u.o.Profile
		c.ColorProfile = func() colorprofile.Profile { return p }
	case u.o.TmuxTrueColor != nil:
		c.ColorProfile = func() colorprofile.Profile {
			return termprofile.WithTmux(lipgloss.Writer.Profile, term.IsTerminal(os.Stdout.Fd()), os.Getenv, u.o.TmuxTrueColor)
		}
	}
	if o.OutboxStore != nil {
		c.Outbox = &tui.Outbox{Store: o.OutboxStore, Backend: o.OutboxBackend}
	}
	return c
}

var errReadOnly = errors.New("this is a replay of a file: it is read-only")

// readOnly is a tui.Backend (and tui.EventStreamer) over a source that
// cannot be written to: it refuses every change, and its capabilities tell
// the UI not to offer any.
type readOnly struct{ cli.ReadOnlySource }

func (r readOnly) Capabilities() tui.Capabilities { return tui.Capabilities{Note: r.Note()} }

func (readOnly) CreateTask(context.Context, maria.CreateTaskRequest) (maria.CreateTaskResult, error) {
	return maria.CreateTaskResult{}, errReadOnly
}

func (readOnly) Send(context.Context, string, string, bool) (maria.SendResult, error) {
	return maria.SendResult{}, errReadOnly
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
	_ cli.Preparer = terminalUI{}
	_ tui.Backend  = readOnly{}
	_ tui.Capable  = readOnly{}
)

func newUI(o Options) cli.UI { return terminalUI{o} }
