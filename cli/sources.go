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
)

// The sources of the board (perch watch, perch tasks --all): every --url,
// else the URL of the environment or the config file, then every
// [[source]] of the config file, then maria's daemon of this machine when
// it is there. A URL is watched once, under the first name it was given.

// sourceSpec is one source before it is opened.
type sourceSpec struct {
	name, url, backend string
	token              string // "" for none
	tokenCommand       string // run at the first open when token is ""
	confPath           string // where tokenCommand comes from
	discovered         bool
	header             http.Header
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
// file.
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
	return len(conf.file.Sources) > 0, nil
}
