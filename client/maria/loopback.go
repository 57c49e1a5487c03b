package maria

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// loopbackFallbackDelay is how long a loopback dial waits for one address
// before it also tries the next (Go's own happy-eyeballs delay). A refused
// address moves on at once; the delay only matters for one that hangs.
const loopbackFallbackDelay = 300 * time.Millisecond

// LookupHostFunc resolves a host name to addresses, like
// (*net.Resolver).LookupHost. Tests inject one that resolves localhost to a
// single family.
type LookupHostFunc func(ctx context.Context, host string) ([]string, error)

// WithLookupHost replaces the resolver used to find what "localhost"
// resolves to (default net.DefaultResolver.LookupHost). nil keeps the
// default.
func WithLookupHost(f LookupHostFunc) Option {
	return func(c *Client) {
		if f != nil {
			c.lookup = f
		}
	}
}

// WithDiscovered says the base URL came from daemon.json rather than from
// the user: for host localhost the daemon's own address, [::1], is then
// tried first. Without it the addresses localhost resolves to come first.
// Either way every loopback address is tried before giving up.
func WithDiscovered() Option {
	return func(c *Client) { c.discovered = true }
}

// withDial replaces the dialer under the loopback logic; tests count and
// log dial attempts with it.
func withDial(f func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(c *Client) { c.dial = f }
}

// loopbackDialer dials host localhost on every loopback address until one
// answers, because the daemon listens on [::1] only while many hosts map
// localhost to 127.0.0.1 alone. The first address that connects is
// remembered and tried first from then on, by every transport that shares
// this dialer (requests and streams alike). The URL, and so the Host
// header and TLS server name, stay localhost:PORT.
//
// Other hosts, IP literals included, are dialled as given.
type loopbackDialer struct {
	dial       func(ctx context.Context, network, addr string) (net.Conn, error)
	lookup     LookupHostFunc
	discovered bool // [::1] first, not what localhost resolves to

	mu     sync.Mutex
	winner string // IP that last connected to localhost, "" if none yet
}

func isLocalhost(host string) bool {
	return strings.EqualFold(strings.TrimSuffix(host, "."), "localhost")
}

func (d *loopbackDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !isLocalhost(host) {
		return d.dial(ctx, network, addr)
	}
	ips, lookupErr := d.candidates(ctx, host)
	addrs := make([]string, len(ips))
	for i, ip := range ips {
		addrs[i] = net.JoinHostPort(ip, port)
	}
	conn, won, errs := d.race(ctx, network, addrs)
	if conn != nil {
		d.mu.Lock()
		d.winner = ips[won]
		d.mu.Unlock()
		return conn, nil
	}
	dialled := hostAddr{network, addr}
	if err := ctx.Err(); err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Addr: dialled, Err: err}
	}
	return nil, &net.OpError{Op: "dial", Net: network, Addr: dialled, Err: &loopbackError{tried: addrs, errs: errs, lookupErr: lookupErr}}
}

// hostAddr is a net.Addr for a host:port that was never resolved to one
// address, so errors read "dial tcp localhost:PORT: ...".
type hostAddr struct{ network, addr string }

func (a hostAddr) Network() string { return a.network }
func (a hostAddr) String() string  { return a.addr }

// candidates lists the IPs to try for localhost, without duplicates: the
// remembered winner, then either [::1], 127.0.0.1 and the resolved
// addresses (discovered URL) or the resolved addresses followed by the
// other loopback family (a URL the user gave). A failed lookup is
// returned for the error message; the loopback addresses are still tried.
func (d *loopbackDialer) candidates(ctx context.Context, host string) ([]string, error) {
	resolved, lookupErr := d.lookup(ctx, host)
	d.mu.Lock()
	winner := d.winner
	d.mu.Unlock()

	var out []string
	seen := map[string]bool{}
	add := func(ips ...string) {
		for _, ip := range ips {
			key := ip
			if p := net.ParseIP(ip); p != nil {
				key = p.String() // "::1" and "0:0:0:0:0:0:0:1" are one address
			}
			if ip != "" && !seen[key] {
				seen[key] = true
				out = append(out, ip)
			}
		}
	}
	add(winner)
	if d.discovered {
		add("::1", "127.0.0.1")
		add(resolved...)
	} else {
		add(resolved...)
		add("::1", "127.0.0.1")
	}
	return out, lookupErr
}

type dialResult struct {
	i    int
	conn net.Conn
	err  error
}

// race dials addrs happy-eyeballs style: one at a time in order, the next
// starting as soon as the previous fails or after loopbackFallbackDelay;
// the first connection wins and the others are cancelled (or closed, if
// they connected too). It returns the winner and its index, or one error
// per address. No goroutine outlives it.
func (d *loopbackDialer) race(ctx context.Context, network string, addrs []string) (net.Conn, int, []error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan dialResult, len(addrs))
	errs := make([]error, len(addrs))
	next, pending := 0, 0
	start := func() {
		i := next
		next++
		pending++
		go func() {
			c, err := d.dial(ctx, network, addrs[i])
			results <- dialResult{i, c, err}
		}()
	}
	timer := time.NewTimer(loopbackFallbackDelay)
	defer timer.Stop()
	start()
	for pending > 0 {
		var fallback <-chan time.Time
		if next < len(addrs) {
			timer.Reset(loopbackFallbackDelay)
			fallback = timer.C
		}
		select {
		case r := <-results:
			pending--
			if r.err == nil {
				cancel()
				for ; pending > 0; pending-- {
					if late := <-results; late.conn != nil {
						late.conn.Close()
					}
				}
				return r.conn, r.i, nil
			}
			errs[r.i] = r.err
			if next < len(addrs) {
				start()
			}
		case <-fallback:
			start()
		}
	}
	return nil, -1, errs
}

// loopbackError says that localhost answered on none of its addresses,
// naming each one and why.
type loopbackError struct {
	tried     []string
	errs      []error
	lookupErr error
}

func (e *loopbackError) Error() string {
	var b strings.Builder
	b.WriteString("nothing answered on ")
	for i, a := range e.tried {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%s)", a, causeText(e.errs[i]))
	}
	if e.lookupErr != nil {
		fmt.Fprintf(&b, "; looking up localhost failed: %v", e.lookupErr)
	}
	return b.String()
}

// causeText strips the "dial tcp ADDR:" prefix a *net.OpError repeats.
func causeText(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	if err == nil {
		return "not tried"
	}
	return err.Error()
}

func (e *loopbackError) Unwrap() []error { return e.errs }

// Timeout is true when every address timed out, so the hint says the
// daemon did not answer in time rather than that it isn't running.
func (e *loopbackError) Timeout() bool {
	if len(e.errs) == 0 {
		return false
	}
	for _, err := range e.errs {
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			return false
		}
	}
	return true
}
