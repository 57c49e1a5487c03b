package cli

import (
	"context"
	"sync"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/internal/spill"
	"github.com/perch-tui/perch/notify"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/tui"
)

// The commands that open the terminal UI (no command, attach, demo,
// replay on a terminal) build a tui.Config and a client.Backend and hand
// them to tui.Run through Env.runUI.

// runUI runs the terminal UI on b until the user quits it, or hands b and
// c to the test that replaced it. The UI offers only what
// b.Capabilities allows.
func (env Env) runUI(ctx context.Context, b client.Backend, c tui.Config) error {
	if env.openUI != nil {
		return env.openUI(ctx, b, c)
	}
	return tui.Run(ctx, b, c)
}

// runServerUI runs the UI on one server (its task list, or one of its
// sessions) and, as the board does for its sources, keeps an index that
// exists current from the server's list: each run that ends is read in.
func (env Env) runServerUI(ctx context.Context, c *conn, b client.Backend, cfg tui.Config) error {
	// The session's key in the index is its source's URL as the board
	// and perch index --url name it; a local CLI's is its directory.
	src := board.Source{Name: b.URL(), URL: b.URL()}
	local := false
	for _, dir := range localDirs(env) {
		local = local || dir == b.URL()
	}
	if !local {
		one := *c
		one.noLocal = true
		if srcs, err := one.boardSources(ctx, env); err == nil && len(srcs) == 1 {
			src.Name, src.URL = srcs[0].Name, srcs[0].URL
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if keeper := startIndexKeeper(ctx, env, []board.Source{src}, &openedBackends{m: map[string]client.Backend{src.Name: b}}); keeper != nil {
		cfg.OnSessions = keeper.lists(src.Name)
		defer func() {
			cancel()
			keeper.wait()
		}()
	}
	return env.runUI(ctx, b, cfg)
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
		Spill: spill.Open, Search: uiSearch(env), OpenIndexed: uiOpenIndexed(env)}
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

// openedBackends keeps the backend each board source last opened, for the
// UI to open that source's sessions through (the board opens and reopens
// them in its own goroutines).
type openedBackends struct {
	mu sync.Mutex
	m  map[string]client.Backend
}

func (o *openedBackends) get(name string) client.Backend {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m[name]
}

// record wraps a source's Open to keep what it opened.
func (o *openedBackends) record(s board.Source) board.Source {
	open := s.Open
	s.Open = func(ctx context.Context) (client.Backend, error) {
		b, err := open(ctx)
		if err == nil {
			o.mu.Lock()
			o.m[s.Name] = b
			o.mu.Unlock()
		}
		return b, err
	}
	return s
}

// runBoardUI opens the UI on the board of sources: every session of every
// source, each opened through its own source's backend. store is where a
// source's messages are kept; stateDir holds the seen marks and the
// outbox journals the board reads ("" for neither). With keepIndex, an
// index that exists is kept current while the board runs (indexKeeper);
// the demo's made-up sessions never go into it.
func (env Env) runBoardUI(ctx context.Context, sources []board.Source, theme, stateDir string, keepIndex bool, store func(source string, b client.Backend) outbox.Store) error {
	opened := &openedBackends{m: map[string]client.Backend{}}
	for i := range sources {
		sources[i] = opened.record(sources[i])
	}
	ctx, cancel := context.WithCancel(ctx)
	opts := board.Options{StateDir: stateDir}
	var keeper *indexKeeper
	if keepIndex {
		keeper = startIndexKeeper(ctx, env, sources, opened)
	}
	if keeper != nil {
		opts.OnChange = keeper.change
	}
	bd := board.Start(ctx, sources, opts)
	defer func() {
		cancel()
		bd.Wait()
		if keeper != nil {
			keeper.wait()
		}
	}()
	cfg := uiConfig(env, theme)
	kinds := notify.All
	if conf, err := env.config(); err == nil {
		kinds = conf.file.Notify.kinds()
	}
	cfg.Board = &tui.Board{Live: bd, Notify: notify.Options{Kinds: kinds, Tmux: notify.InTmux(env.Getenv)},
		Open: func(source string) (client.Backend, *tui.Outbox, bool) {
			b := opened.get(source)
			if b == nil {
				return nil, nil, false
			}
			return b, &tui.Outbox{Store: store(source, b)}, true
		}}
	return env.runUI(ctx, nil, cfg)
}
