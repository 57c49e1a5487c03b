package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/internal/pricing"
	"github.com/perch-tui/perch/notify"
	"github.com/perch-tui/perch/tui"
)

// perch's config file: $XDG_CONFIG_HOME/perch/config.toml, else
// ~/.config/perch/config.toml. It holds defaults: a flag wins over the
// environment, which wins over the file, which wins over perch's own
// default.
//
//	url = "http://localhost:8000/v1"
//	backend = "suna"
//	token_command = "pass show suna"   # run only when a token is needed; never printed
//	theme = "dark"
//
//	[keys]
//	cancel_run = "ctrl+k"
//	hold = ["ctrl+g", "ctrl+h"]
//
//	[[source]]                         # one per server the board watches (perch watch, tasks --all)
//	name = "work"
//	url = "https://suna.example.com/v1"
//	backend = "suna"                   # optional: asked of the URL
//	token_command = "pass show suna"   # or token = "…"
//
//	[notify]                           # what the board's UI sends when a session needs you
//	bell = true                        # BEL (each is on unless set to false)
//	osc9 = true                        # desktop notification, OSC 9
//	osc777 = false                     # desktop notification, OSC 777
//
//	[local.claude-code]                # a CLI whose sessions on this machine the board shows
//	enabled = false                    # on unless set to false
//	dir = "~/work/.claude"             # its directory; the CLI's own variable
//	                                   # (CLAUDE_CONFIG_DIR, CODEX_HOME) wins
//
//	[prices."claude-sonnet-4-5"]       # perch usage: a model's price, US$ per million tokens
//	input = 3.0                        # (replaces or adds to the embedded table)
//	output = 15.0
//	cache_read = 0.30
//	cache_write_5m = 3.75
//	cache_write_1h = 6.0

// fileConfig is the file's contents.
type fileConfig struct {
	URL          text                          `toml:"url"`
	Backend      text                          `toml:"backend"`
	TokenCommand text                          `toml:"token_command"`
	Theme        text                          `toml:"theme"`
	Keys         map[string]keyList            `toml:"keys"`
	Sources      []sourceConfig                `toml:"source"`
	Notify       notifyConfig                  `toml:"notify"`
	Local        map[string]localConfig        `toml:"local"`
	Prices       map[string]map[string]float64 `toml:"prices"`
}

// localConfig is a [local.<system>] table: one local CLI's sessions.
type localConfig struct {
	Enabled *bool `toml:"enabled"`
	Dir     text  `toml:"dir"`
}

// localKeys are a [local.<system>] table's keys.
var localKeys = []string{"enabled", "dir"}

// localSettings are the [local] tables as the registry takes them.
func (c *config) localSettings() map[string]registry.LocalSetting {
	out := map[string]registry.LocalSetting{}
	if c == nil {
		return out
	}
	for name, lc := range c.file.Local {
		out[name] = registry.LocalSetting{Off: lc.Enabled != nil && !*lc.Enabled, Dir: string(lc.Dir)}
	}
	return out
}

// notifyConfig is the [notify] table: which signals the board's UI sends
// when a session needs the user. Each is on unless set to false.
type notifyConfig struct {
	Bell   *bool `toml:"bell"`
	OSC9   *bool `toml:"osc9"`
	OSC777 *bool `toml:"osc777"`
}

// notifyKeys are the [notify] table's keys.
var notifyKeys = []string{"bell", "osc9", "osc777"}

// kinds is the table as notify.Kinds.
func (n notifyConfig) kinds() notify.Kinds {
	on := func(b *bool) bool { return b == nil || *b }
	return notify.Kinds{Bell: on(n.Bell), OSC9: on(n.OSC9), OSC777: on(n.OSC777)}
}

// sourceConfig is one [[source]] table: a server the board watches.
type sourceConfig struct {
	Name         text `toml:"name"`
	URL          text `toml:"url"`
	Backend      text `toml:"backend"`
	Token        text `toml:"token"`
	TokenCommand text `toml:"token_command"`
}

// text is a string setting; anything else is refused with a word on
// how to write it (the TOML library adds the line).
type text string

func (t *text) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf(`not a string: write it in quotes, as in theme = "dark"`)
	}
	*t = text(s)
	return nil
}

// configKeys are the file's keys, for messages.
const configKeys = "url, backend, token_command, theme, the [keys], [notify], [prices] and [local.<system>] tables and [[source]] tables"

// sourceKeys are a [[source]] table's keys.
var sourceKeys = []string{"name", "url", "backend", "token", "token_command"}

// keyList is one action's keys: a string or an array of strings.
type keyList []string

func (k *keyList) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		*k = keyList{v}
		return nil
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return errors.New(`a key is a string: write ["ctrl+k", "f5"]`)
			}
			*k = append(*k, s)
		}
		return nil
	}
	return errors.New(`write a key as a string ("ctrl+k") or several as an array (["ctrl+k", "f5"])`)
}

// config is the config file as perch read it.
type config struct {
	path  string // where it is, or would be ("" without a home)
	found bool
	file  fileConfig
}

// configState caches the config file for one run of perch: it is read
// once, by the first command that needs it.
type configState struct {
	once sync.Once
	c    *config
	err  error
}

// configPath is where the config file is: $XDG_CONFIG_HOME (when it is
// an absolute path, as the XDG spec asks) or ~/.config.
func configPath(env Env) string {
	if dir := getenv(env, "XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "perch", "config.toml")
	}
	if env.Home == "" {
		return ""
	}
	return filepath.Join(env.Home, ".config", "perch", "config.toml")
}

// config reads the config file once per run (Main sets env.conf); a
// missing file is no error, one that does not parse is.
func (env Env) config() (*config, error) {
	if env.conf == nil {
		return loadConfig(configPath(env))
	}
	env.conf.once.Do(func() { env.conf.c, env.conf.err = loadConfig(configPath(env)) })
	return env.conf.c, env.conf.err
}

func loadConfig(path string) (*config, error) {
	c := &config{path: path}
	if path == "" {
		return c, nil
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	c.found = true
	md, err := toml.Decode(string(raw), &c.file)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("config file %s, line %d: %s%s", path, pe.Position.Line, pe.Message, usageHint(pe.Usage))
		}
		return nil, fmt.Errorf("config file %s: %s", path, strings.TrimPrefix(err.Error(), "toml: "))
	}
	bad := func(line int, format string, args ...any) error {
		where := path
		if line > 0 {
			where = fmt.Sprintf("%s, line %d", path, line)
		}
		return fmt.Errorf("config file %s: %s", where, fmt.Sprintf(format, args...))
	}
	text := string(raw)
	for _, k := range md.Undecoded() {
		if len(k) == 2 && k[0] == "keys" {
			continue // checked below, against the actions
		}
		if len(k) == 2 && k[0] == "source" {
			return nil, bad(0, "[[source]]: unknown key %q%s; its keys are %s", k[1], didYouMean(k[1], sourceKeys), strings.Join(sourceKeys, ", "))
		}
		if len(k) == 3 && k[0] == "local" {
			return nil, bad(lineOf(text, k), "[local.%s]: unknown key %q%s; its keys are %s", k[1], k[2], didYouMean(k[2], localKeys), strings.Join(localKeys, ", "))
		}
		if len(k) == 2 && k[0] == "notify" {
			return nil, bad(lineOf(text, k), "[notify]: unknown key %q%s; its keys are %s", k[1], didYouMean(k[1], notifyKeys), strings.Join(notifyKeys, ", "))
		}
		known := []string{"url", "backend", "token_command", "theme", "keys", "source", "notify", "local", "prices"}
		return nil, bad(lineOf(text, k), "unknown key %q%s; the keys are %s", k.String(), didYouMean(k[len(k)-1], known), configKeys)
	}
	f := &c.file
	if f.Backend != "" {
		if _, err := registry.Default().Lookup(string(f.Backend)); err != nil {
			return nil, bad(lineOf(text, toml.Key{"backend"}), "backend must be one of %s, not %q%s",
				strings.Join(registry.LiveNames(), ", "), f.Backend, didYouMean(string(f.Backend), registry.LiveNames()))
		}
	}
	if f.Theme != "" {
		if err := oneOf("theme", string(f.Theme), "auto", "dark", "light"); err != nil {
			return nil, bad(lineOf(text, toml.Key{"theme"}), "theme must be auto, dark or light, not %q%s",
				f.Theme, didYouMean(string(f.Theme), []string{"auto", "dark", "light"}))
		}
	}
	if _, err := f.prices(); err != nil {
		return nil, bad(0, "%v", err)
	}
	if err := checkSources(f.Sources); err != nil {
		return nil, bad(0, "%v", err)
	}
	localNames := registry.Default().LocalNames()
	for name := range f.Local {
		if indexOf(localNames, name) < 0 {
			return nil, bad(lineOf(text, toml.Key{"local", name}), "[local.%s]: perch knows the local CLIs %s, not %q%s",
				name, strings.Join(localNames, ", "), name, didYouMean(name, localNames))
		}
	}
	actions := tui.KeyActions()
	names := make([]string, 0, len(f.Keys))
	for name := range f.Keys {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		line := lineOf(text, toml.Key{"keys", name})
		if indexOf(actions, name) < 0 {
			return nil, bad(line, "[keys]: no action %q%s; the actions are %s", name, didYouMean(name, actions), strings.Join(actions, ", "))
		}
		if len(f.Keys[name]) == 0 {
			return nil, bad(line, "[keys] %s: give at least one key", name)
		}
		for _, k := range f.Keys[name] {
			if err := tui.CheckKey(k); err != nil {
				return nil, bad(line, "[keys] %s: %v", name, err)
			}
		}
	}
	if err := tui.KeyConflicts(c.keys()); err != nil {
		return nil, bad(0, "[keys]: %v", err)
	}
	return c, nil
}

func usageHint(u string) string {
	if u = strings.TrimSpace(u); u == "" {
		return ""
	}
	return "\n" + u
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// lineOf finds the line that sets key (a table's key under its [table]
// header, or a dotted key), 0 when it cannot tell. The TOML library says
// where a syntax error is, but not where a well-formed key is.
func lineOf(text string, key toml.Key) int {
	table := ""
	for i, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			table = strings.TrimSpace(strings.Trim(strings.SplitN(t, "#", 2)[0], "[] \t"))
			continue
		}
		name, _, ok := strings.Cut(t, "=")
		if !ok {
			continue
		}
		full := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(name), " ", ""), `"`, "")
		if table != "" {
			full = table + "." + full
		}
		if full == strings.Join(key, ".") {
			return i + 1
		}
	}
	return 0
}

// keys is the config file's [keys] table for tui.Config.
func (c *config) keys() map[string][]string {
	if c == nil || len(c.file.Keys) == 0 {
		return nil
	}
	out := make(map[string][]string, len(c.file.Keys))
	for name, ks := range c.file.Keys {
		out[name] = ks
	}
	return out
}

// runTokenCommand runs the config file's token_command and returns what
// it printed, trimmed. Its output is the secret: it is never shown, even
// when the command fails; its stderr (a passphrase prompt) reaches perch's.
func runTokenCommand(ctx context.Context, env Env, c *config) (string, error) {
	return tokenFromCommand(ctx, env, c.path, string(c.file.TokenCommand))
}

// tokenFromCommand runs a token command of the config file at path (the
// file's or a [[source]]'s) the same way.
func tokenFromCommand(ctx context.Context, env Env, path, command string) (string, error) {
	shell, flag := "sh", "-c"
	if runtime.GOOS == "windows" {
		shell, flag = "cmd", "/C"
	}
	cmd := exec.CommandContext(ctx, shell, flag, command)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, env.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("token_command of %s (%s) failed: %w", path, command, err)
	}
	tok := strings.TrimSpace(out.String())
	if env.secrets != nil {
		env.secrets.add(tok)
	}
	if tok == "" {
		return "", fmt.Errorf("token_command of %s (%s) printed no token", path, command)
	}
	return tok, nil
}

// runConfig is perch config: where the config file is (config path), or
// the settings in effect and where each comes from. The token is never
// shown, and token_command is not run.
func runConfig(_ context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "config")
	var c conn
	c.register(fs)
	theme := themeFlag(fs)
	pos, err := parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	if len(pos) == 1 {
		if pos[0] != "path" {
			return usagef("config: unknown argument %q%s (want 'path' or nothing)", pos[0], didYouMean(pos[0], []string{"path"}))
		}
		p := configPath(env)
		if p == "" {
			return errors.New("config: no config file: neither XDG_CONFIG_HOME nor a home directory is set")
		}
		_, err := fmt.Fprintln(env.Stdout, p)
		return err
	}
	s, err := c.resolve(env)
	if err != nil {
		return err
	}
	themeFrom := "--theme"
	if *theme == "" {
		themeFrom = "config file"
	}
	if err := resolveTheme(env, theme); err != nil {
		return err
	}
	if s.conf.file.Theme == "" && themeFrom != "--theme" {
		themeFrom = "default"
	}
	w := env.Stdout
	line := func(name, value, from string) {
		if from != "" {
			value += "  (" + from + ")"
		}
		fmt.Fprintf(w, "%-16s %s\n", name, value)
	}
	file := s.conf.path
	switch {
	case file == "":
		file = "(none: no home directory)"
	case !s.conf.found:
		file += "  (not found: every setting is a default)"
	}
	line("config file", file, "")
	line("url", or(s.url.value, "(none: maria's daemon from ~/.moonagent/daemon.json)"), s.url.from)
	line("backend", or(s.backend.value, "(none: asked of the URL)"), s.backend.from)
	switch {
	case s.token.value != "":
		line("token", "REDACTED", s.token.from)
	case s.conf.file.TokenCommand != "":
		line("token", "token_command's output, when a command needs a token", "config file")
	default:
		line("token", "(none)", "")
	}
	line("theme", *theme, themeFrom)
	reg := registry.Default()
	if env.registry != nil {
		reg = env.registry()
	}
	for _, ls := range reg.LocalStates(env.Getenv, env.Home, s.conf.localSettings()) {
		name := ls.System + ": "
		switch {
		case ls.Off:
			line("local", name+"off", "config file")
		case ls.Dir == "":
			line("local", name+"(none: no home directory)", "")
		case !ls.Exists:
			line("local", name+ls.Dir+", not there: not watched", ls.From)
		default:
			line("local", name+ls.Dir, ls.From)
		}
	}
	keys := s.conf.keys()
	names := make([]string, 0, len(keys))
	for name := range keys {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		line("keys."+name, strings.Join(keys[name], ", "), "config file")
	}
	p := pricing.DefaultPrices()
	line("prices", fmt.Sprintf("%s: %s, %s", nounCount(len(p.Models), "model"), p.Source, p.Date), "embedded")
	models := make([]string, 0, len(s.conf.file.Prices))
	for m := range s.conf.file.Prices {
		models = append(models, m)
	}
	sort.Strings(models)
	for _, m := range models {
		var kv []string
		for _, k := range pricing.PriceKeys() {
			if v, ok := s.conf.file.Prices[m][k]; ok {
				kv = append(kv, fmt.Sprintf("%s %g", k, v))
			}
		}
		line("prices."+m, strings.Join(kv, ", ")+" ($ per million tokens; the others unknown)", "config file")
	}
	showTables(s.conf.file, line) // config_show.go
	return nil
}

// priceTable is the embedded price table with the config file's
// [prices]: the usage report's and the local sessions' costs.
func (c *config) priceTable() (pricing.Prices, error) {
	p := pricing.DefaultPrices()
	if c == nil {
		return p, nil
	}
	over, err := c.file.prices() // checked when the file was read
	if err != nil {
		return p, err
	}
	return p.With(over, "the config file's [prices]"), nil
}

// prices is the config file's [prices] tables read as prices.
func (f *fileConfig) prices() (map[string]pricing.Price, error) {
	out := map[string]pricing.Price{}
	for m, t := range f.Prices {
		if len(t) == 0 {
			return nil, fmt.Errorf(`[prices]: %q holds no prices; write a model's as [prices."MODEL"] with input = …, output = …`, m)
		}
		p, err := pricing.PriceFrom(t)
		if err != nil {
			return nil, fmt.Errorf("[prices.%q]: %w", m, err)
		}
		out[m] = p
	}
	return out, nil
}

func or(v, otherwise string) string {
	if v == "" {
		return otherwise
	}
	return v
}

// checkSources checks the [[source]] tables: each has a URL, a known
// backend if any, at most one way to the token, and a name of its own.
func checkSources(ss []sourceConfig) error {
	names := map[string]bool{}
	for i, s := range ss {
		label := fmt.Sprintf("[[source]] number %d", i+1)
		if s.Name != "" {
			label = fmt.Sprintf("[[source]] %q", s.Name)
		}
		if strings.TrimSpace(string(s.URL)) == "" {
			return fmt.Errorf("%s: url is missing (e.g. url = %q)", label, urlExample(client.Suna))
		}
		if s.Backend != "" {
			if _, err := registry.Default().Lookup(string(s.Backend)); err != nil {
				return fmt.Errorf("%s: backend must be one of %s, not %q%s", label,
					strings.Join(registry.LiveNames(), ", "), s.Backend, didYouMean(string(s.Backend), registry.LiveNames()))
			}
		}
		if s.Token != "" && s.TokenCommand != "" {
			return fmt.Errorf("%s: give token or token_command, not both", label)
		}
		name := sourceName(s)
		if names[name] {
			return fmt.Errorf("%s: another source has the name %q: give each a name of its own", label, name)
		}
		names[name] = true
	}
	return nil
}

// sourceName is what a source's rows call it: its name, else its URL.
func sourceName(s sourceConfig) string {
	if n := strings.TrimSpace(string(s.Name)); n != "" {
		return n
	}
	return registry.RedactURL(string(s.URL))
}
