package cli

import (
	"context"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/spill"
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

// uiConfig is what every command gives the UI: the environment, the
// theme and the config file's key overrides (resolveTheme read the file
// already, and said what is wrong with it).
func uiConfig(env Env, theme string) tui.Config {
	c := tui.Config{Theme: theme, Cwd: env.Cwd, Getenv: env.Getenv, Home: env.Home, Unsent: env.Stderr,
		Spill: spill.Open}
	if conf, err := env.config(); err == nil {
		c.Keys = conf.keys()
	}
	return c
}

// themeFlag is --theme of the commands that open the UI; "" means the
// config file's theme, else auto (see resolveTheme).
func themeFlag(fs *flagSet) *string {
	return fs.String("theme", "", "colour theme: auto, dark or light (default: the config file's theme, else auto; NO_COLOR disables colour)")
}

// resolveTheme fills in an unset --theme from the config file (else
// auto) and checks it.
func resolveTheme(env Env, theme *string) error {
	conf, err := env.config()
	if err != nil {
		return err
	}
	if *theme == "" {
		*theme = string(conf.file.Theme)
	}
	if *theme == "" {
		*theme = "auto"
	}
	return oneOf("theme", *theme, "auto", "dark", "light")
}

// withOutbox keeps what the user sends in store (the UI's backend
// delivers it).
func withOutbox(c tui.Config, store outbox.Store) tui.Config {
	c.Outbox = &tui.Outbox{Store: store}
	return c
}
