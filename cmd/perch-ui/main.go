// Command perch-ui is perch with its terminal UI: every command of perch,
// and the UI they open. The perch program, which leaves the UI's libraries
// out so that its scriptable commands start fast, replaces itself with
// this one whenever a command opens the UI (docs/architecture.md, "Two
// programs"); it can also be run directly.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/perch-tui/perch/cli"
	"github.com/perch-tui/perch/cmd/perch-ui/internal/tmuxearly"
	_ "github.com/perch-tui/perch/cmd/perch-ui/internal/widthtables" // see its doc
	"github.com/perch-tui/perch/internal/firstpaint"
	"github.com/perch-tui/perch/internal/prof"
	"github.com/perch-tui/perch/internal/uiexec"
	"github.com/perch-tui/perch/tui/app"
	// Attocode's session stores are SQLite databases: perch-ui reads them,
	// perch hands them over to it (backend/attocode.Driver).
	_ "modernc.org/sqlite"
)

func main() {
	// TMUX was hidden from lipgloss's initialisation while tmux is asked
	// about colour on the side (internal/tmuxinfo); it is back before
	// anything reads the environment.
	tmux := tmuxearly.Query()
	tmux.Restore()
	// perch may have drawn the task list already (internal/firstpaint):
	// its terminal modes come back first, so that Bubble Tea saves the
	// user's own.
	handover, guard, painted := firstpaint.TakeOver(os.Getenv, os.Stdin, os.Stdout)
	tasks, _ := firstpaint.DecodeTasks(os.Getenv(firstpaint.EnvTasks))
	// Set by perch when it handed over; nothing started from here must
	// see them.
	os.Unsetenv(uiexec.EnvHandedOver)
	os.Unsetenv(firstpaint.Env)
	os.Unsetenv(firstpaint.EnvTasks)
	stopProfile := prof.Start()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := cli.OSEnv()
	var o app.Options
	if tmux != nil {
		o.TmuxTrueColor = tmux.TrueColor
	}
	if painted {
		o.Profile = &handover.Profile
		env.Painted = true
		env.PaintedTasks = tasks
		env.Stderr = guard.Writer(env.Stderr)
		o.OnStart = guard.Disarm
	}
	env.UI = app.New(o)
	code := cli.Main(ctx, env, os.Args[1:])
	guard.Close()
	stop()
	stopProfile()
	os.Exit(code)
}
