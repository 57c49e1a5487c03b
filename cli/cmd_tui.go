package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/fakedaemon"
	fakepynchy "github.com/perch-tui/perch/fakedaemon/pynchy"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/tui"
)

// liveConfig is the UI's configuration for a live backend: its outbox is
// the same files as perch send and perch queue use for that server (the
// UI delivers through the backend; see outbox.Pace), and the task list
// the probe read, when it read one, is shown at once.
func (c *conn) liveConfig(env Env, b client.Backend, theme string) tui.Config {
	cfg := withOutbox(uiConfig(env, theme), outbox.OpenFileStore(outboxRoot(env), b.URL()))
	cfg.Tasks = c.probedTasks
	cfg.MarkSeen = seenMarker(env, c.given)
	return cfg
}

func runRoot(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "perch")
	var c conn
	c.register(fs)
	theme := themeFlag(fs)
	model := fs.String("model", "", "model for tasks created with 'n' (default: the daemon's)")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if err := resolveTheme(env, theme); err != nil {
		return err
	}
	prepareUI()
	if many, err := c.manySources(env); err != nil {
		return err
	} else if many {
		sources, err := c.boardSources(ctx, env)
		if err != nil {
			return err
		}
		root := outboxRoot(env)
		return env.runBoardUI(ctx, sources, *theme, root, true, func(_ string, b client.Backend) outbox.Store {
			return outbox.OpenFileStore(root, b.URL())
		})
	}
	b, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	cfg := c.liveConfig(env, b, *theme)
	cfg.Model = *model
	return env.runServerUI(ctx, &c, b, cfg)
}

func runAttach(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "attach")
	var c conn
	c.register(fs)
	theme := themeFlag(fs)
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if err := resolveTheme(env, theme); err != nil {
		return err
	}
	prepareUI()
	b, task, err := c.openSession(ctx, env, pos[0], c.open)
	if err != nil {
		return err
	}
	cfg := c.liveConfig(env, b, *theme)
	cfg.TaskID = task.ID
	return env.runServerUI(ctx, &c, b, cfg)
}

func dialectFlag(v string) (fakedaemon.Dialect, error) {
	if err := oneOf("dialect", v, "head", "docs", "legacy"); err != nil {
		return "", err
	}
	return fakedaemon.Dialect(v), nil
}

func runDemo(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "demo")
	theme := themeFlag(fs)
	dialect := fs.String("dialect", "head", "wire dialect of the fake daemon: head, docs or legacy")
	speed := fs.Float64("speed", 1, "pace of the scripted agent (2 = twice as fast)")
	be := fs.String("backend", client.Maria, "which system to fake: maria, suna or pynchy")
	all := fs.Bool("all", false, "run the fake maria, Suna and pynchy servers together, with sessions that finish, fail and wait over a few minutes")
	serve := fs.Bool("serve", false, "with --all: print the servers' URLs and serve until interrupted (for perch watch and perch tasks --all), no UI")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if err := resolveTheme(env, theme); err != nil {
		return err
	}
	if *serve && !*all {
		return usagef("--serve needs --all")
	}
	if *all {
		if *speed <= 0 {
			return usagef("--speed must be positive")
		}
		if !*serve {
			prepareUI()
		}
		return runDemoAll(ctx, env, *theme, *speed, *serve)
	}
	if err := oneOf("backend", *be, registry.Default().LiveNames()...); err != nil {
		return err
	}
	if *be != client.Maria {
		if *speed <= 0 {
			return usagef("--speed must be positive")
		}
		prepareUI()
		return runDemoBackend(ctx, env, *be, *theme, *speed)
	}
	d, err := dialectFlag(*dialect)
	if err != nil {
		return err
	}
	if *speed <= 0 {
		return usagef("--speed must be positive")
	}
	prepareUI()
	daemon := fakedaemon.New(fakedaemon.Options{Dialect: d, Speed: *speed})
	srv, err := daemon.Start("127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: start the fake daemon: %w", err)
	}
	defer srv.Close()
	id, err := daemon.SeedDemo()
	if err != nil {
		return fmt.Errorf("demo: create the demo task: %w", err)
	}
	c := conn{url: srv.URL, mariaOnly: true}
	b, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	// Held messages are kept where another terminal's perch send --hold
	// finds them, and the screen says how (demo_outbox.go).
	st, err := newDemoState(b.URL())
	if err != nil {
		return err
	}
	defer st.finish(env.Stderr)
	cfg := withOutbox(uiConfig(env, *theme), st.store)
	cfg.Banner = st.banner(id, b.URL())
	cfg.TaskID = id
	return env.runUI(ctx, b, cfg)
}

func runFakeDaemon(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "fake-daemon")
	kind := fs.String("kind", client.Maria, "which server to fake: maria, suna or pynchy")
	addr := fs.String("addr", "localhost:8090", "address to listen on (host:port; port 0 picks a free one)")
	dialect := fs.String("dialect", "head", "wire dialect: head, docs or legacy")
	speed := fs.Float64("speed", 1, "pace of the scripted agent (2 = twice as fast)")
	replay := fs.String("replay", "", "serve a recorded stream file (from 'perch record') as a task")
	long := fs.Int("long-session", 0, "serve a finished, idle session of N events instead of the demo (benchmark load)")
	bigMB := fs.Float64("big-output-mb", 0, "with --long-session: end it with a read_file of this many MiB of output")
	lineMB := fs.Float64("long-line-mb", 0, "with --long-session: add a command whose output is one line of this many MiB")
	prompt := fs.String("prompt", "", "the demo task's first message (a restart with another one gives the demo task's id to a new task)")
	sf := addSunaFlags(fs)
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	switch *kind {
	case client.Maria:
	case client.Suna:
		if *speed <= 0 {
			return usagef("--speed must be positive")
		}
		return runFakeSuna(ctx, env, *addr, *speed, sf)
	case client.Pynchy:
		if *speed <= 0 {
			return usagef("--speed must be positive")
		}
		step := time.Duration(float64(250*time.Millisecond) / *speed)
		return fakepynchy.Run(ctx, *addr, fakepynchy.Options{StepDelay: step}, env.Stdout)
	default:
		return usagef("--kind must be maria, suna or pynchy, not %q", *kind)
	}
	d, err := dialectFlag(*dialect)
	if err != nil {
		return err
	}
	if *speed <= 0 {
		return usagef("--speed must be positive")
	}
	if strings.TrimSpace(*addr) == "" {
		return usagef("--addr must not be empty")
	}
	sc := fakedaemon.Scenario{Replay: *replay, Prompt: *prompt}
	switch {
	case *long == 0 && (*bigMB != 0 || *lineMB != 0):
		return usagef("--big-output-mb and --long-line-mb need --long-session")
	case *prompt != "" && (*long != 0 || *replay != ""):
		return usagef("--prompt seeds the demo task: it excludes --replay and --long-session")
	case *long != 0 && *replay != "":
		return usagef("--long-session and --replay exclude each other")
	case *long != 0 && *long < fakedaemon.MinLongSessionEvents:
		return usagef("--long-session needs at least %d events", fakedaemon.MinLongSessionEvents)
	case *bigMB < 0 || *lineMB < 0:
		return usagef("output sizes must not be negative")
	case *long != 0:
		sc.Long = &fakedaemon.LongSession{Events: *long, BigOutput: int(*bigMB * (1 << 20)), LongLine: int(*lineMB * (1 << 20))}
	}
	return fakedaemon.RunScenario(ctx, *addr, fakedaemon.Options{Dialect: d, Speed: *speed}, sc, env.Stdout)
}
