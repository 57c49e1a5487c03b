package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/perch-tui/perch/backend"
	mariab "github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/backend/registry"
	"github.com/perch-tui/perch/events"
)

// urlExample is each backend's usual base URL, for messages.
var urlExample = map[string]string{
	backend.Maria:  "http://localhost:8090/v1",
	backend.Suna:   "http://localhost:8000/v1",
	backend.Pynchy: "http://localhost:8484",
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

// settings resolves the backend name and the token from the flags, else
// the environment. The token is registered as a secret at once, so no
// later message can show it.
func (c *conn) settings(env Env) (name, token string, err error) {
	if c.mariaOnly {
		return backend.Maria, "", nil
	}
	token = c.token
	if token == "" {
		token = getenv(env, "PERCH_TOKEN")
	}
	token = strings.TrimSpace(token)
	if env.secrets != nil {
		env.secrets.add(token)
	}
	for i := 0; i < len(token); i++ {
		if b := token[i]; b <= ' ' || b == 0x7f {
			// Never quoted: it is a secret.
			return "", "", usagef("invalid --token (or PERCH_TOKEN): it contains a space or a control character at byte %d", i+1)
		}
	}
	name = strings.TrimSpace(c.backend)
	from := "--backend"
	if name == "" {
		name, from = strings.TrimSpace(getenv(env, "PERCH_BACKEND")), "PERCH_BACKEND"
	}
	if name == "" {
		return "", token, nil
	}
	if _, err := registry.Default().Lookup(name); err != nil {
		return "", "", usagef("%s must be one of %s, not %q", from, strings.Join(registry.LiveNames(), ", "), name)
	}
	return name, token, nil
}

// header is the --header values plus the token as a bearer token.
func (c *conn) header(token string) (http.Header, error) {
	h := http.Header{}
	for _, raw := range c.headers {
		name, value, err := mariab.ParseHeader(raw)
		if err != nil {
			return nil, usageError{err.Error()}
		}
		h.Add(name, value)
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return h, nil
}

// open returns the live backend the command talks to:
//   - no URL (neither --url nor PERCH_URL): maria's daemon, found as it
//     always was (daemon.json, every loopback address);
//   - --backend (or PERCH_BACKEND): that backend, not asked first;
//   - else every backend's probe asks the URL at once, and perch says on
//     stderr which system answered. A URL where nothing listens at all is
//     taken for maria, perch's first backend, so a message sent while the
//     daemon is down is kept as always and the error says what failed.
func (c *conn) open(ctx context.Context, env Env) (backend.Backend, error) {
	name, token, err := c.settings(env)
	if err != nil {
		return nil, err
	}
	raw := strings.TrimSpace(c.url)
	if raw == "" {
		raw = strings.TrimSpace(getenv(env, "PERCH_URL"))
	}
	if raw == "" {
		if name == "" || name == backend.Maria {
			cl, err := c.client(env)
			if err != nil {
				return nil, err
			}
			return mariab.New(cl), nil
		}
		return nil, usagef("--backend %s needs the server's URL: --url or PERCH_URL (e.g. %s)", name, urlExample[name])
	}
	h, err := c.header("")
	if err != nil {
		return nil, err
	}
	// maria's client adds the headers itself and keeps its loopback
	// dialling; the others get them from their HTTP client.
	mariaOpts := []mariab.Option{mariab.WithHeaders(h), mariab.WithLookupHost(env.LookupHost)}
	cfg := backend.Config{URL: raw, Token: token}
	if len(h) > 0 {
		u, err := url.Parse(raw)
		if err == nil {
			cfg.Client = &http.Client{Transport: &headerTransport{base: http.DefaultTransport, header: h, host: u.Host}}
		}
	}
	reg := registry.Default()
	if env.registry != nil {
		reg = env.registry()
	}
	// Read after reg.Open, which waits for every probe it started.
	var probed []events.Task
	for i := range reg.Systems {
		if reg.Systems[i].Name != backend.Maria {
			continue
		}
		reg.Systems[i].Probe = func(ctx context.Context, cfg backend.Config) error {
			cfg.Client = nil
			ts, err := mariab.ProbeTasks(ctx, cfg, mariaOpts...)
			probed = ts
			return err
		}
		reg.Systems[i].Open = func(cfg backend.Config) (backend.Backend, error) {
			cfg.Client = nil
			b, err := mariab.OpenWith(cfg, mariaOpts...)
			if err != nil {
				return nil, err
			}
			return b, nil
		}
	}
	b, err := reg.Open(ctx, name, cfg)
	var none *registry.NoBackendError
	if name == "" && errors.As(err, &none) && none.Unreachable {
		cfg.Client = nil
		if mb, merr := mariab.OpenWith(cfg, mariaOpts...); merr == nil {
			return mb, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if name == "" {
		fmt.Fprintf(env.Stderr, "perch: %s answers as %s\n", registry.RedactURL(b.URL()), b.Name())
		if b.Name() == backend.Maria {
			c.probedTasks = probed
		}
	}
	return b, nil
}

// headerTransport adds the --header values to every request to the
// server's host (never to a redirect's other host).
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
	host   string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == t.host {
		req = req.Clone(req.Context())
		for k, vs := range t.header {
			req.Header[k] = append([]string(nil), vs...)
		}
	}
	return t.base.RoundTrip(req)
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
