package cli

import (
	"context"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/tui"
)

// The commands that open the terminal UI (no command, attach, demo,
// replay on a terminal) build a tui.Config and a backend.Backend and hand
// them to tui.Run through Env.runUI.

// runUI runs the terminal UI on b until the user quits it, or hands b and
// c to the test that replaced it. The UI offers only what
// b.Capabilities allows.
func (env Env) runUI(ctx context.Context, b backend.Backend, c tui.Config) error {
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
// theme.
func uiConfig(env Env, theme string) tui.Config {
	return tui.Config{Theme: theme, Cwd: env.Cwd, Getenv: env.Getenv, Home: env.Home, Unsent: env.Stderr}
}

// withOutbox keeps what the user sends in store (the UI's backend
// delivers it).
func withOutbox(c tui.Config, store outbox.Store) tui.Config {
	c.Outbox = &tui.Outbox{Store: store}
	return c
}
