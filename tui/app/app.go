// Package app is the glue between perch's command line and its terminal
// UI: it implements cli.UI over package tui. Only the perch-ui program
// (cmd/perch-ui) links it; the perch program stays free of the UI's
// libraries and hands every invocation that opens the UI to perch-ui
// (docs/architecture.md, "Two programs").
package app

import (
	"time"

	"github.com/charmbracelet/colorprofile"

	"github.com/perch-tui/perch/cli"
)

// Options are what perch-ui found out about the terminal before main.
type Options struct {
	// TmuxTrueColor waits up to timeout for tmux's answer to whether it
	// passes 24-bit colour, when perch-ui asked it at start and hid TMUX
	// from lipgloss's own detection (internal/tmuxinfo).
	// Nil: lipgloss's detection was complete.
	TmuxTrueColor func(timeout time.Duration) (trueColor, answered bool)
	// Profile, when set, is the colour profile to draw with: the one perch
	// drew the task list with before it handed over (internal/firstpaint),
	// so that perch-ui's first frame is the same.
	Profile *colorprofile.Profile
	// OnStart is called as the UI takes the terminal.
	OnStart func()
}

// New returns the terminal UI the commands open (cli.Env.UI).
func New(o Options) cli.UI { return newUI(o) }
