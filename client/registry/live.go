package registry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// Opening a live backend: the one the user named (--backend), or the one
// whose probe answers at a URL, all systems' probes asked at once.

// ProbeTimeout bounds the probing of a URL: every probe is one cheap
// request, so a server that has not answered by then is not one of ours
// (or is down).
const ProbeTimeout = 5 * time.Second

// Open opens backend name for cfg; name "" probes cfg.URL with every
// backend at once and opens the one that answers (its Name says which).
func Open(ctx context.Context, name string, cfg client.Config) (client.Backend, error) {
	return Default().Open(ctx, name, cfg)
}

// OpenProbed is Open that also returns the sessions the probe saw (see
// Registry.OpenProbed).
func OpenProbed(ctx context.Context, name string, cfg client.Config) (client.Backend, []events.Task, error) {
	return Default().OpenProbed(ctx, name, cfg)
}

// ErrUnknownBackend is returned (wrapped) for a name no live system has.
var ErrUnknownBackend = errors.New("unknown backend")

// Lookup returns the live system called name.
func (r *Registry) Lookup(name string) (System, error) {
	for _, s := range r.live() {
		if s.Name == name {
			return s, nil
		}
	}
	return System{}, fmt.Errorf("%w %q: want one of %s", ErrUnknownBackend, name, strings.Join(r.LiveNames(), ", "))
}

// Open is the package's Open on this registry.
func (r *Registry) Open(ctx context.Context, name string, cfg client.Config) (client.Backend, error) {
	b, _, err := r.OpenProbed(ctx, name, cfg)
	return b, err
}

// OpenProbed is Open that also returns the sessions the probe saw, when
// it probed and the answering system's probe reads them (maria's task
// list), so that the caller need not ask for them again; nil otherwise.
func (r *Registry) OpenProbed(ctx context.Context, name string, cfg client.Config) (client.Backend, []events.Task, error) {
	var sessions []events.Task
	if name == "" {
		found, err := r.probe(ctx, cfg)
		if err != nil {
			return nil, nil, err
		}
		name, sessions = found.name, found.sessions
	}
	s, err := r.Lookup(name)
	if err != nil {
		return nil, nil, err
	}
	b, err := s.Open(cfg)
	if err != nil {
		return nil, nil, err
	}
	return b, sessions, nil
}

// NoBackendError says that no backend answered at a URL, with each
// probe's reason.
type NoBackendError struct {
	URL     string // as given, with any token redacted
	Names   []string
	Reasons []error // one per name
	// Unreachable: nothing accepts a connection at the URL's host and
	// port (the server is down, or the address is wrong), so the probes
	// said nothing about what runs there. DialErr says why.
	Unreachable bool
	DialErr     error
	// secrets are scrubbed from the message: the token, and a token the
	// URL itself carries (a probe's error may quote the URL as given).
	secrets []string
}

func (e *NoBackendError) Error() string {
	msg := e.message()
	for _, s := range e.secrets {
		if len(s) >= 4 { // a shorter one would mangle ordinary text
			msg = strings.ReplaceAll(msg, s, "REDACTED")
		}
	}
	return msg
}

func (e *NoBackendError) message() string {
	var b strings.Builder
	if e.Unreachable {
		fmt.Fprintf(&b, "nothing answers at %s (%v); is the server running? check --url", e.URL, e.DialErr)
		return b.String()
	}
	fmt.Fprintf(&b, "%s does not answer as %s (", e.URL, orList(e.Names))
	for i, n := range e.Names {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %v", n, e.Reasons[i])
	}
	fmt.Fprintf(&b, "); check --url, or name the system with --backend %s", strings.Join(e.Names, "|"))
	return b.String()
}

// orList is "a, b or c".
func orList(names []string) string {
	switch len(names) {
	case 0:
		return "nothing"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Probe asks every backend's probe about cfg.URL at once and returns the
// name of the first that answers; the others are cancelled. When none
// does, the error is a *NoBackendError.
func (r *Registry) Probe(ctx context.Context, cfg client.Config) (string, error) {
	found, err := r.probe(ctx, cfg)
	return found.name, err
}

// found is the system a probe found and the sessions its answer carried.
type found struct {
	name     string
	sessions []events.Task
}

func (r *Registry) probe(ctx context.Context, cfg client.Config) (found, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = ProbeTimeout
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type answer struct {
		i        int
		sessions []events.Task
		err      error
	}
	live := r.live()
	answers := make(chan answer, len(live))
	for i, e := range live {
		go func() {
			sessions, err := e.Probe(ctx, cfg)
			if err == nil && ctx.Err() != nil {
				err = ctx.Err()
			}
			answers <- answer{i, sessions, err}
		}()
	}
	reasons := make([]error, len(live))
	first := -1
	var sessions []events.Task
	for range live {
		a := <-answers
		reasons[a.i] = a.err
		if a.err == nil && first < 0 {
			first, sessions = a.i, a.sessions
			cancel() // the others need not finish; they return at once
		}
	}
	if first >= 0 {
		return found{live[first].Name, sessions}, nil
	}
	if err := parent.Err(); err != nil {
		return found{}, err // the caller gave up
	}
	dialErr := unreachable(parent, cfg.URL)
	secrets := []string{cfg.Token}
	if u, err := url.Parse(strings.TrimSpace(cfg.URL)); err == nil {
		secrets = append(secrets, u.Query()["token"]...)
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p)
		}
	}
	return found{}, &NoBackendError{URL: RedactURL(cfg.URL), Names: r.LiveNames(), Reasons: reasons,
		Unreachable: dialErr != nil, DialErr: dialErr, secrets: secrets}
}

// unreachable returns why nothing accepts a TCP connection at the URL's
// host and port (nil when something does); for host localhost every loopback address is tried
// (maria listens on [::1] alone, while localhost often means 127.0.0.1).
// A URL that does not parse is not called unreachable: its probes' errors
// say what is wrong with it.
func unreachable(ctx context.Context, raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Hostname() == "" {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		if port == "" {
			return nil
		}
	}
	hosts := []string{u.Hostname()}
	if strings.EqualFold(strings.TrimSuffix(u.Hostname(), "."), "localhost") {
		hosts = append(hosts, "::1", "127.0.0.1")
	}
	d := net.Dialer{Timeout: 2 * time.Second}
	var first error
	for _, h := range hosts {
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(h, port))
		if err == nil {
			c.Close()
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// RedactURL hides what a URL may carry that must not be printed: a
// password and the value of a token query parameter.
func RedactURL(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		if strings.Contains(strings.ToLower(s), "token") || strings.Contains(s, "@") {
			return "(a URL that does not parse)"
		}
		return s
	}
	if q := u.Query(); q.Has("token") {
		q.Set("token", "REDACTED")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}
