package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/registry"
)

// urlExample is a live system's usual base URL, for messages (the
// registry's, "" for a name it does not know).
func urlExample(name string) string {
	sys, err := registry.Default().Lookup(name)
	if err != nil {
		return ""
	}
	return sys.URLExample
}

func getenv(env Env, k string) string {
	if env.Getenv == nil {
		return ""
	}
	return env.Getenv(k)
}

func (c *conn) cmdName() string {
	if c.cmd == "" || c.cmd == "perch" {
		return "(the terminal UI)"
	}
	return c.cmd
}

// setting is one resolved value and where it came from: a flag, an
// environment variable, the config file (its path), or "" (unset).
type setting struct{ value, from string }

// connSettings are the connection's settings as perch resolves them:
// a flag wins over the environment, which wins over the config file.
type connSettings struct {
	url, backend, token setting
	conf                *config
}

// resolve reads the flags, the environment and the config file; it runs
// nothing (the config file's token_command runs in config, when a token
// is needed).
func (c *conn) resolve(env Env) (connSettings, error) {
	conf, err := env.config()
	if err != nil {
		return connSettings{}, err
	}
	pick := func(flagV, flagName, envName, confV string) setting {
		if v := strings.TrimSpace(flagV); v != "" {
			return setting{v, flagName}
		}
		if v := strings.TrimSpace(getenv(env, envName)); v != "" {
			return setting{v, envName}
		}
		if v := strings.TrimSpace(confV); v != "" {
			return setting{v, "config file"}
		}
		return setting{}
	}
	return connSettings{conf: conf,
		url:     pick(c.url, "--url", "PERCH_URL", string(conf.file.URL)),
		backend: pick(c.backend, "--backend", "PERCH_BACKEND", string(conf.file.Backend)),
		token:   pick(c.token, "--token", "PERCH_TOKEN", ""),
	}, nil
}

// checkToken registers the token as a secret at once, so no later message
// can show it, and refuses one no header can carry.
func checkToken(env Env, token, from string) error {
	if env.secrets != nil {
		env.secrets.add(token)
	}
	for i := 0; i < len(token); i++ {
		if b := token[i]; b <= ' ' || b == 0x7f {
			// Never quoted: it is a secret.
			return usagef("invalid %s: it contains a space or a control character at byte %d", from, i+1)
		}
	}
	return nil
}

// header is the --header values.
func (c *conn) header() (http.Header, error) {
	h := http.Header{}
	for _, raw := range c.headers {
		name, value, err := client.ParseHeader(raw)
		if err != nil {
			return nil, usageError{msg: err.Error()}
		}
		h.Add(name, value)
	}
	return h, nil
}

// config resolves the backend's name ("" to probe the URL) and its
// Config from the flags, the environment and the config file. Without a
// URL (from none of them) the registry discovers the daemon of this
// machine. The config file's token_command runs only when there is a URL
// and no token from a flag or the environment.
func (c *conn) config(ctx context.Context, env Env) (string, client.Config, error) {
	if c.mariaOnly {
		h, err := c.header()
		return client.Maria, client.Config{URL: c.url, Header: h, LookupHost: env.LookupHost}, err
	}
	s, err := c.resolve(env)
	if err != nil {
		return "", client.Config{}, err
	}
	if err := checkToken(env, s.token.value, s.token.from); err != nil {
		return "", client.Config{}, err
	}
	name := s.backend.value
	if name != "" {
		if _, err := registry.Default().Lookup(name); err != nil {
			return "", client.Config{}, usagef("%s must be one of %s, not %q%s", s.backend.from, strings.Join(registry.LiveNames(), ", "), name, didYouMean(name, registry.LiveNames()))
		}
	}
	h, err := c.header()
	if err != nil {
		return "", client.Config{}, err
	}
	cfg := client.Config{Token: s.token.value, Header: h, LookupHost: env.LookupHost, URL: s.url.value}
	if cfg.URL != "" {
		if cfg.Token == "" && s.conf.file.TokenCommand != "" {
			if cfg.Token, err = runTokenCommand(ctx, env, s.conf); err != nil {
				return "", client.Config{}, err
			}
			if err := checkToken(env, cfg.Token, "token_command"); err != nil {
				return "", client.Config{}, err
			}
		}
		return name, cfg, nil
	}
	if name != "" && name != registry.Local {
		return "", client.Config{}, usagef("--backend %s needs the server's URL: --url, PERCH_URL or url in the config file (e.g. %s)", name, urlExample(name))
	}
	name, cfg.URL, err = registry.Discover(env.Home)
	if err != nil {
		return "", client.Config{}, &noDaemonError{err}
	}
	cfg.Discovered = true
	return name, cfg, nil
}

// open returns the live backend the command talks to, through the
// registry:
//   - no URL (neither --url nor PERCH_URL): the daemon the registry
//     discovers (maria's, from daemon.json), not asked first;
//   - --backend (or PERCH_BACKEND): that backend, not asked first;
//   - else every backend's probe asks the URL at once, and perch says on
//     stderr which system answered. A URL where nothing listens at all is
//     taken for maria, perch's first backend, so a message sent while the
//     daemon is down is kept as always and the error says what failed.
//
// A command that opens twice (the UI commands) gets the same backend.
func (c *conn) open(ctx context.Context, env Env) (client.Backend, error) {
	return c.openAs(ctx, env, false)
}

// openStream is open for the stream commands (export, tail, record): a
// URL that no probe recognises is taken for maria, quietly, as before
// there were other backends (a proxy or server that serves a task's
// stream but not maria's daemon stream still works, and errors are
// maria's own).
func (c *conn) openStream(ctx context.Context, env Env) (client.Backend, error) {
	return c.openAs(ctx, env, true)
}

func (c *conn) openAs(ctx context.Context, env Env, stream bool) (client.Backend, error) {
	if c.opened != nil {
		return c.opened, nil
	}
	name, cfg, err := c.config(ctx, env)
	if err != nil {
		return nil, err
	}
	c.given = cfg.URL
	reg := registry.Default()
	if env.registry != nil {
		reg = env.registry()
	}
	b, probed, err := reg.OpenProbed(ctx, name, cfg)
	var none *registry.NoBackendError
	if name == "" && errors.As(err, &none) {
		if _, lerr := reg.Lookup(client.Maria); lerr == nil {
			switch {
			case stream:
				b, err = reg.Open(ctx, client.Maria, cfg)
				if err != nil {
					return nil, err
				}
				c.opened = b
				return b, nil
			case none.Unreachable:
				if mb, merr := reg.Open(ctx, client.Maria, cfg); merr == nil {
					c.opened = mb
					return mb, nil
				}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if name == "" {
		if env.StderrIsTerminal || c.verbose {
			// A note for people; a script's stderr stays for errors.
			fmt.Fprintf(env.Stderr, "perch: %s answers as %s\n", registry.RedactURL(b.URL()), b.Name())
		}
		c.probedTasks = probed
	}
	c.opened = b
	return b, nil
}

// secrets are the values perch must never print (the token). Everything
// written to stderr, error messages included, passes through redact.
type secrets struct {
	mu   sync.Mutex
	vals []string
}

func (s *secrets) add(v string) {
	if len(v) < 4 {
		return // too short to tell from ordinary text; never printed by perch itself anyway
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, have := range s.vals {
		if have == v {
			return
		}
	}
	s.vals = append(s.vals, v)
}

func (s *secrets) redact(p []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.vals {
		if bytes.Contains(p, []byte(v)) {
			p = bytes.ReplaceAll(p, []byte(v), []byte("REDACTED"))
		}
	}
	return p
}

// redactWriter writes through secrets.redact.
type redactWriter struct {
	w io.Writer
	s *secrets
}

func (r redactWriter) Write(p []byte) (int, error) {
	if _, err := r.w.Write(r.s.redact(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
