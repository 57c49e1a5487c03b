// Command perch is a terminal client for live agent sessions: this is its
// command line. The terminal UI is a second program, perch-ui
// (cmd/perch-ui), which perch becomes when a command opens the UI, so
// that the scriptable commands start without the UI's libraries
// (docs/architecture.md, "Two programs").
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/perch-tui/perch/cli"
	"github.com/perch-tui/perch/internal/prof"
	"github.com/perch-tui/perch/internal/uiexec"
	// Hands attach, demo and bare perch (unless it paints first) over to
	// perch-ui before the rest of perch's packages are initialised, and
	// hides TMUX from lipgloss's initialisation.
	"github.com/perch-tui/perch/internal/uiexec/early"
)

func main() {
	tmux := early.Tmux()
	tmux.Restore()
	stopProfile := prof.Start()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	args := os.Args[1:]
	env := cli.OSEnv()
	// The whole invocation goes to perch-ui, unchanged: it parses the
	// arguments again and runs the command with its UI.
	env.StartUI = func(extra ...string) error { return uiexec.Start(args, extra...) }
	env.CanPaintFirst = func() bool { _, err := uiexec.OS().Find(); return err == nil }
	if tmux != nil {
		env.TmuxTrueColor = tmux.TrueColor
	}
	code := cli.Main(ctx, env, args)
	stop()
	stopProfile()
	os.Exit(code)
}
