package cli

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/registry"
)

// configEnv is an Env whose config file (under XDG_CONFIG_HOME) holds
// text, whose environment is vars, and whose registry answers every URL
// with a stub Suna, noting the client.Config each open got.
type configEnv struct {
	dir    string
	vars   map[string]string
	mu     sync.Mutex
	opened []client.Config
	probed int
	ui     recordingUI
}

func newConfigEnv(t *testing.T, text string) *configEnv {
	t.Helper()
	c := &configEnv{dir: t.TempDir(), vars: map[string]string{}}
	c.vars["XDG_CONFIG_HOME"] = c.dir
	if err := os.MkdirAll(filepath.Join(c.dir, "perch"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.path(), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *configEnv) path() string { return filepath.Join(c.dir, "perch", "config.toml") }

func (c *configEnv) run(t *testing.T, args ...string) result {
	t.Helper()
	s := &stubBackend{name: client.Suna, url: "http://stub"}
	return runEnv(context.Background(), t, func(e *Env) {
		e.Getenv = func(k string) string { return c.vars[k] }
		e.IsTerminal = true
		e.openUI = c.ui.open
		e.registry = func() *registry.Registry {
			return &registry.Registry{Systems: []registry.System{
				{Name: client.Maria},
				{Name: client.Suna, Probe: registry.ProbeOnly(func(context.Context, client.Config) error {
					c.mu.Lock()
					c.probed++
					c.mu.Unlock()
					return nil
				}), Open: func(cfg client.Config) (client.Backend, error) {
					c.mu.Lock()
					c.opened = append(c.opened, cfg)
					c.mu.Unlock()
					return s, nil
				}},
			}}
		}
	}, "", args...)
}

func (c *configEnv) last() client.Config {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opened[len(c.opened)-1]
}

// The config file gives defaults: a flag wins over the environment, which
// wins over the file. token_command runs only when a token is needed and
// is never printed; perch config shows the settings and where each comes
// from.
func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "ran")
	c := newConfigEnv(t, `# perch's settings
url = "http://from-config/v1"
backend = "suna"
token_command = "touch '`+marker+`'; echo tok-from-command"
theme = "dark"

[keys]
cancel_run = "ctrl+k"
hold = ["ctrl+g", "f5"]
`)
	ran := func() bool { _, err := os.Stat(marker); return err == nil }

	// perch config and perch config path run nothing.
	r := must(t, c.run(t, "config"))
	for _, want := range []string{"config file      " + c.path(), "url              http://from-config/v1  (config file)",
		"backend          suna  (config file)", "theme            dark  (config file)", "keys.hold        ctrl+g, f5  (config file)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("perch config lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := must(t, c.run(t, "config", "path")); r.stdout != c.path()+"\n" {
		t.Errorf("perch config path: %q", r.stdout)
	}
	if ran() {
		t.Fatal("perch config ran token_command")
	}

	// The file alone: its url, its backend (no probe), the token its
	// command prints.
	must(t, c.run(t, "tasks"))
	if got := c.last(); got.URL != "http://from-config/v1" || got.Token != "tok-from-command" || c.probed != 0 || !ran() {
		t.Errorf("from the file: %+v, probed %d, ran %v", got, c.probed, ran())
	}
	// The environment wins over the file, a flag over the environment.
	os.Remove(marker)
	c.vars["PERCH_URL"], c.vars["PERCH_TOKEN"] = "http://from-env/v1", "tok-from-env"
	must(t, c.run(t, "tasks"))
	if got := c.last(); got.URL != "http://from-env/v1" || got.Token != "tok-from-env" || ran() {
		t.Errorf("from the environment: %+v, token_command ran: %v", got, ran())
	}
	must(t, c.run(t, "tasks", "--url", "http://from-flag/v1", "--token", "tok-from-flag"))
	if got := c.last(); got.URL != "http://from-flag/v1" || got.Token != "tok-from-flag" {
		t.Errorf("from the flags: %+v", got)
	}
	r = must(t, c.run(t, "config", "--token", "tok-from-flag"))
	if !strings.Contains(r.stdout, "url              http://from-env/v1  (PERCH_URL)") ||
		!strings.Contains(r.stdout, "token            REDACTED  (--token)") || strings.Contains(r.stdout, "tok-from") {
		t.Errorf("perch config with the environment and a flag:\n%s", r.stdout)
	}

	// The UI gets the file's theme (a flag wins) and its keys.
	must(t, c.run(t, "attach", "chat-alice"))
	must(t, c.run(t, "attach", "chat-alice", "--theme", "light"))
	if len(c.ui.cfgs) != 2 || c.ui.cfgs[0].Theme != "dark" || c.ui.cfgs[1].Theme != "light" {
		t.Fatalf("themes: %+v", c.ui.cfgs)
	}
	if want := map[string][]string{"cancel_run": {"ctrl+k"}, "hold": {"ctrl+g", "f5"}}; !reflect.DeepEqual(c.ui.cfgs[0].Keys, want) {
		t.Errorf("keys: %v", c.ui.cfgs[0].Keys)
	}
}

// A config file that does not parse, or says what perch does not know, is
// an error naming the file, the line and what to fix.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, want string }{
		{"url = \n", "line 1: expected value"},
		{"# a\nthme = \"dark\"\n", `line 2: unknown key "thme" (did you mean theme?)`},
		{"theme = \"blue\"\n", `line 1: theme must be auto, dark or light, not "blue"`},
		{"theme = 3\n", "line 1: not a string: write it in quotes"},
		{"backend = \"sunna\"\n", "(did you mean suna?)"},
		{"\n[keys]\ncancel_runn = \"ctrl+k\"\n", `line 3: [keys]: no action "cancel_runn" (did you mean cancel_run?)`},
		{"[keys]\nhold = \"ctl+g\"\n", `line 2: [keys] hold: "ctl+g": "ctl" is not a modifier`},
	} {
		c := newConfigEnv(t, tc.text)
		r := c.run(t, "tasks")
		if r.code != ExitFailure || !strings.Contains(r.stderr, "config file "+c.path()+", ") || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %q", tc.text, r.code, r.stderr, tc.want)
		}
	}
	// Commands that need no settings do not read it.
	c := newConfigEnv(t, "url = \n")
	if r := c.run(t, "completion", "bash"); r.code != 0 {
		t.Errorf("completion with a broken config file: %+v", r)
	}
}

// Without XDG_CONFIG_HOME the file is under ~/.config.
func TestConfigPathDefault(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	r := must(t, runEnv(context.Background(), t, func(e *Env) { e.Home = home }, "", "config", "path"))
	if want := filepath.Join(home, ".config", "perch", "config.toml") + "\n"; r.stdout != want {
		t.Errorf("config path: %q, want %q", r.stdout, want)
	}
}
