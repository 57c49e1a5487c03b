package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/events"
)

// The sources of the board (perch watch, perch tasks --all): every --url,
// else the URL of the environment or the config file, then every
// [[source]] of the config file, then maria's daemon of this machine when
// it is there, then the local CLIs whose sessions are on this machine
// (Claude Code's, Codex's: client/registry's LocalSources, each on unless
// the config file's [local.<system>] says enabled = false). A URL is
// watched once, under the first name it was given.

// sourceSpec is one source before it is opened.
type sourceSpec struct {
	name, url, backend string
	token              string // "" for none
	tokenCommand       string // run at the first open when token is ""
	confPath           string // where tokenCommand comes from
	discovered         bool
	header             http.Header
	// local opens a local CLI's sessions (url is then its directory).
	local func() (client.Backend, error)
}

// boardSources resolves the sources and makes each a board.Source that
// opens through the registry.
func (c *conn) boardSources(ctx context.Context, env Env) ([]board.Source, error) {
	s, err := c.resolve(env)
	if err != nil {
		return nil, err
	}
	if err := checkToken(env, s.token.value, s.token.from); err != nil {
		return nil, err
	}
	if s.backend.value != "" {
		if _, err := registry.Default().Lookup(s.backend.value); err != nil {
			return nil, usagef("%s must be one of %s, not %q%s", s.backend.from, strings.Join(registry.LiveNames(), ", "), s.backend.value, didYouMean(s.backend.value, registry.LiveNames()))
		}
	}
	h, err := c.header()
	if err != nil {
		return nil, err
	}
	var specs []sourceSpec
	urls := c.urls
	if len(urls) == 0 && s.url.value != "" {
		urls = []string{s.url.value}
	}
	for _, u := range urls {
		sp := sourceSpec{name: registry.RedactURL(u), url: strings.TrimSpace(u), backend: s.backend.value, token: s.token.value, header: h}
		if sp.token == "" && s.conf.file.TokenCommand != "" {
			sp.tokenCommand, sp.confPath = string(s.conf.file.TokenCommand), s.conf.path
		}
		specs = append(specs, sp)
	}
	for _, sc := range s.conf.file.Sources {
		if err := checkToken(env, string(sc.Token), "token of [[source]] "+sourceName(sc)); err != nil {
			return nil, err
		}
		specs = append(specs, sourceSpec{name: sourceName(sc), url: strings.TrimSpace(string(sc.URL)), backend: string(sc.Backend),
			token: string(sc.Token), tokenCommand: string(sc.TokenCommand), confPath: s.conf.path, header: h})
	}
	if name, u, err := registry.Discover(env.Home); err == nil {
		specs = append(specs, sourceSpec{name: "local", url: u, backend: name, discovered: true, header: h})
	}
	for _, ls := range c.localSources(env, s.conf) {
		specs = append(specs, sourceSpec{name: ls.System, url: ls.Dir, backend: ls.System, local: ls.Open})
	}
	if len(specs) == 0 {
		return nil, usagef("no source to watch: give --url (several if you like), add [[source]] tables to %s, or start maria's daemon", or(s.conf.path, "the config file"))
	}
	reg := registry.Default()
	if env.registry != nil {
		reg = env.registry()
	}
	var out []board.Source
	seenURL, seenName := map[string]bool{}, map[string]int{}
	for _, sp := range specs {
		if seenURL[sp.url] {
			continue
		}
		seenURL[sp.url] = true
		if n := seenName[sp.name]; n > 0 {
			seenName[sp.name]++
			sp.name = fmt.Sprintf("%s (%d)", sp.name, n+1)
		} else {
			seenName[sp.name] = 1
		}
		out = append(out, board.Source{Name: sp.name, System: sp.backend, URL: registry.RedactURL(sp.url),
			Open: sp.opener(env, reg)})
	}
	return out, nil
}

// opener opens the source through the registry: a named system is asked
// first whether the URL answers as it (else the source's row says which
// system does), an unnamed one is probed. The token command runs once.
func (sp sourceSpec) opener(env Env, reg *registry.Registry) func(ctx context.Context) (client.Backend, error) {
	if sp.local != nil {
		return func(context.Context) (client.Backend, error) { return sp.local() }
	}
	var once sync.Mutex
	token, tokenErr, ran := sp.token, error(nil), false
	return func(ctx context.Context) (client.Backend, error) {
		once.Lock()
		if token == "" && sp.tokenCommand != "" && !ran {
			ran = true
			token, tokenErr = tokenFromCommand(ctx, env, sp.confPath, sp.tokenCommand)
			if tokenErr == nil {
				tokenErr = checkToken(env, token, "token_command")
			}
		}
		tok, terr := token, tokenErr
		once.Unlock()
		if terr != nil {
			return nil, terr
		}
		cfg := client.Config{URL: sp.url, Token: tok, Header: sp.header, LookupHost: env.LookupHost, Discovered: sp.discovered}
		if sp.backend == "" || sp.discovered {
			b, _, err := reg.OpenProbed(ctx, sp.backend, cfg)
			return b, probeError(err)
		}
		got, err := reg.Probe(ctx, cfg)
		switch {
		case err == nil && got != sp.backend:
			return nil, &board.WrongSystemError{Want: sp.backend, Got: got}
		case err != nil && ctx.Err() != nil:
			return nil, err
		case err != nil:
			var none *registry.NoBackendError
			if errors.As(err, &none) && none.Unreachable {
				return nil, err
			}
			if perr := probeError(err); errors.Is(perr, board.ErrRefused) {
				return nil, perr
			}
			// Not recognised (a proxy, an older server): open it as named;
			// its list says what is wrong.
		}
		return reg.Open(ctx, sp.backend, cfg)
	}
}

// probeError makes a probe that failed because a server refused the
// token say so (board.ErrRefused).
func probeError(err error) error {
	var none *registry.NoBackendError
	if !errors.As(err, &none) {
		return err
	}
	for _, r := range none.Reasons {
		var he *client.HTTPError
		if errors.As(r, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden) {
			return fmt.Errorf("%w: %v", board.ErrRefused, he)
		}
	}
	return err
}

// manySources: perch opens the board rather than one server's task list
// when given several --url, or none and [[source]] tables in the config
// file, or no URL at all (neither --url, PERCH_URL nor the config file's)
// while a local CLI has sessions on this machine.
func (c *conn) manySources(env Env) (bool, error) {
	if len(c.urls) > 1 {
		return true, nil
	}
	if len(c.urls) == 1 {
		return false, nil
	}
	conf, err := env.config()
	if err != nil {
		return false, err
	}
	if len(conf.file.Sources) > 0 {
		return true, nil
	}
	s, err := c.resolve(env)
	if err != nil {
		return false, err
	}
	return s.url.value == "" && len(c.localSources(env, conf)) > 0, nil
}

// localSources are the local CLIs whose sessions this machine has, as
// the config file sets them; none for a command given a URL by flag
// (it talks to that server only).
func (c *conn) localSources(env Env, conf *config) []registry.LocalSource {
	if c.url != "" || c.mariaOnly || c.noLocal {
		return nil
	}
	reg := registry.Default()
	if env.registry != nil {
		reg = env.registry()
	}
	prices, _ := conf.priceTable() // a bad [prices] fails when the file is read
	return reg.LocalSources(env.Getenv, env.Home, conf.localSettings(), outboxRoot(env), prices)
}

// openSession opens the backend that has the session idOrPrefix and
// finds it there: the server's (open), else, when the server has no such
// session or none answers, a local CLI's session with that id or a unique
// prefix of it, as the board lists it.
func (c *conn) openSession(ctx context.Context, env Env, idOrPrefix string, open func(context.Context, Env) (client.Backend, error)) (client.Backend, events.Task, error) {
	b, err := open(ctx, env)
	var task events.Task
	if err == nil {
		if task, err = b.Session(ctx, idOrPrefix); err == nil {
			return b, task, nil
		}
		if !errors.Is(err, client.ErrNoTask) && !unreachable(err) {
			return nil, events.Task{}, err
		}
	}
	if lb, lt, ok := c.localSession(ctx, env, idOrPrefix); ok {
		c.opened = lb
		return lb, lt, nil
	}
	return nil, events.Task{}, err
}

// localSession finds idOrPrefix among the local CLIs' sessions: the one
// source that has it.
func (c *conn) localSession(ctx context.Context, env Env, idOrPrefix string) (client.Backend, events.Task, bool) {
	conf, err := env.config()
	if err != nil {
		return nil, events.Task{}, false
	}
	for _, ls := range c.localSources(env, conf) {
		b, err := ls.Open()
		if err != nil {
			continue
		}
		if t, err := b.Session(ctx, idOrPrefix); err == nil {
			return b, t, true
		}
	}
	return nil, events.Task{}, false
}
