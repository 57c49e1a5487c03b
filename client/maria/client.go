package maria

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/perch-tui/perch/client"
)

// Timeouts. Request/response calls get a per-call deadline; streams get none
// (only dial and response-header limits), because a stream lives for hours.
const (
	callTimeout        = 30 * time.Second
	createTaskTimeout  = 6 * time.Minute // the daemon waits up to 5 min for the task to register
	dialTimeout        = 10 * time.Second
	tlsTimeout         = 10 * time.Second
	streamHeaderWait   = 15 * time.Second // the daemon answers an events request at once
	maxResponseBody    = 64 << 20         // task lists and queues are small; this only guards memory
	errorBodyExcerpt   = 300              // bytes of a non-JSON error body quoted in an error
	defaultStreamRetry = 500 * time.Millisecond
)

// Option configures a Client.
type Option func(*Client)

// WithHeaders adds headers to every request, streams included (e.g. for an
// authenticating proxy). The values are never written to errors or logs.
func WithHeaders(h http.Header) Option {
	return func(c *Client) {
		for k, vs := range h {
			for _, v := range vs {
				c.headers.Add(k, v)
			}
		}
	}
}

// WithHTTPClient replaces the HTTP client used for request/response calls.
// Streams reuse its Transport (never its Timeout, which would cut a stream).
// Its transport dials as it likes: no loopback fallback (see
// loopbackDialer). Meant for tests.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) { c.hc = hc }
}

// streamTiming holds the reconnect knobs; tests shrink them through
// withStreamTiming rather than weakening the production defaults.
type streamTiming struct {
	initial    time.Duration // first backoff interval
	max        time.Duration // backoff ceiling
	cleanDelay time.Duration // pause before resubscribing after a clean close
}

func withStreamTiming(t streamTiming) Option {
	return func(c *Client) { c.timing = t }
}

// Client talks to one maria daemon. It is safe for concurrent use.
type Client struct {
	base     *url.URL // normalized, no trailing slash, ends in /v1
	baseStr  string
	headers  http.Header
	hc       *http.Client // request/response calls
	streamHC *http.Client // streams (see package sse): no overall timeout
	timing   streamTiming

	// Dialling of the default transports (see loopbackDialer).
	lookup     LookupHostFunc
	discovered bool
	dial       func(ctx context.Context, network, addr string) (net.Conn, error)
}

// NewClient returns a client for baseURL, which must be an http(s) URL ending in
// /v1 (a trailing slash is accepted), e.g. http://localhost:8090/v1.
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	u, err := parseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{
		base:    u,
		baseStr: u.String(),
		headers: http.Header{},
		timing:  streamTiming{initial: defaultStreamRetry, max: 10 * time.Second, cleanDelay: time.Second},
	}
	for _, o := range opts {
		o(c)
	}
	var base http.RoundTripper
	if c.hc == nil {
		if c.lookup == nil {
			c.lookup = net.DefaultResolver.LookupHost
		}
		if c.dial == nil {
			c.dial = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
		}
		// One dialer for both transports, so the loopback address that
		// answered a request is the one streams try first, and vice versa.
		ld := &loopbackDialer{dial: c.dial, lookup: c.lookup, discovered: c.discovered}
		tr := newTransport(ld.DialContext)
		c.hc = &http.Client{Transport: tr}
		// A separate transport for streams: it needs a response-header
		// limit (a hung daemon must not look "connecting" forever) that
		// request calls can't share, because CreateTask waits minutes for
		// its headers. Keep-alives are off: a stream connection is never
		// worth reusing, and an idle one would only linger.
		st := newTransport(ld.DialContext)
		st.ResponseHeaderTimeout = streamHeaderWait
		st.DisableKeepAlives = true
		// A replay arrives as one chunk per event (about 5 KB): with
		// net/http's 4 KB read buffer every chunk cost two reads from
		// the socket. 256 KB lets one read take many chunks.
		st.ReadBufferSize = streamReadBuffer
		base = st
	} else {
		base = c.hc.Transport
		if base == nil {
			base = http.DefaultTransport
		}
	}
	// Package sse adds the headers to each stream attempt (to the daemon's
	// host only) and guards the body.
	c.streamHC = &http.Client{
		Transport:     base,
		CheckRedirect: c.hc.CheckRedirect,
		Jar:           c.hc.Jar,
	}
	return c, nil
}

// streamReadBuffer is the stream transport's read buffer (net/http's
// default is 4 KB).
const streamReadBuffer = 256 << 10

func newTransport(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Transport {
	// Proxy from the environment, like any Go tool; TLS verification stays
	// on (the default): a daemon behind https must present a trusted cert.
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dial,
		TLSHandshakeTimeout:   tlsTimeout,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          10,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

func parseBaseURL(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("daemon URL is empty (want e.g. http://localhost:8090/v1)")
	}
	u, err := url.Parse(s)
	if err != nil {
		// url.Parse errors quote the input; the input is a URL we were
		// given, not a header, so quoting it is fine.
		return nil, fmt.Errorf("invalid daemon URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid daemon URL %q: scheme must be http or https (want e.g. http://localhost:8090/v1)", u.Redacted())
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("invalid daemon URL %q: no host (want e.g. http://localhost:8090/v1)", u.Redacted())
	}
	if u.User != nil {
		// Credentials in a URL end up in every error message; headers don't.
		return nil, fmt.Errorf("invalid daemon URL %q: credentials in the URL are not supported; use --header instead", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return nil, fmt.Errorf("invalid daemon URL %q: no query or fragment allowed", u.Redacted())
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	if !strings.HasSuffix(u.Path, "/v1") {
		return nil, fmt.Errorf("invalid daemon URL %q: the path must end in /v1 (e.g. %s://%s/v1)", u.Redacted(), u.Scheme, u.Host)
	}
	return u, nil
}

// BaseURL is the normalized base URL, ending in /v1 without a slash.
func (c *Client) BaseURL() string { return c.baseStr }

// endpoint joins path segments onto the base URL, escaping each one so an
// id can never step into another route.
func (c *Client) endpoint(segs ...string) string {
	return client.Endpoint(c.baseStr, segs...)
}

// APIError is a non-2xx answer from the daemon.
type APIError struct {
	Method  string
	URL     string
	Status  int    // HTTP status
	Code    int    // the daemon's own "code" (usually -1, or the task server's HTTP code)
	Message string // the daemon's message, or an excerpt of a non-JSON body
}

func (e *APIError) Error() string {
	status := http.StatusText(e.Status)
	if status == "" {
		status = "status"
	}
	s := fmt.Sprintf("%s %s: %d %s", e.Method, e.URL, e.Status, status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// As lets errors.As find the daemon's answer as the system-neutral
// *client.HTTPError: the daemon was reached and said no.
func (e *APIError) As(target any) bool {
	if t, ok := target.(**client.HTTPError); ok {
		*t = &client.HTTPError{Status: e.Status, Message: e.Message, URL: e.URL}
		return true
	}
	return false
}

// IsNotFound reports whether err is (or wraps) a 404 from the daemon.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// notRunningError marks a cancel 404 so errors.Is(err,
// client.ErrNotRunning) works while errors.As still finds the APIError.
type notRunningError struct{ *APIError }

func (e notRunningError) Is(target error) bool { return target == client.ErrNotRunning }
func (e notRunningError) Unwrap() error        { return e.APIError }

// newAPIError decodes a daemon error body. Both formats of docs/protocol.md §2.1
// ({"error":{code,message,metadata|data}}), a bare JSON string (register
// errors), {"error":"text"}, and arbitrary text are understood.
func newAPIError(method, u string, status int, body []byte) *APIError {
	e := &APIError{Method: method, URL: u, Status: status}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return e
	}
	switch trimmed[0] {
	case '{':
		var w struct {
			Error   json.RawMessage `json:"error"`
			Message string          `json:"message"`
		}
		if json.Unmarshal(trimmed, &w) == nil {
			var inner struct {
				Code    json.Number `json:"code"`
				Message string      `json:"message"`
			}
			var str string
			switch {
			case len(w.Error) > 0 && json.Unmarshal(w.Error, &inner) == nil && (inner.Message != "" || inner.Code != ""):
				e.Message = inner.Message
				if n, err := inner.Code.Int64(); err == nil {
					e.Code = int(n)
				}
			case len(w.Error) > 0 && json.Unmarshal(w.Error, &str) == nil:
				e.Message = str
			case w.Message != "":
				e.Message = w.Message
			default:
				e.Message = excerpt(trimmed)
			}
			return e
		}
	case '"':
		var str string
		if json.Unmarshal(trimmed, &str) == nil {
			e.Message = oneLine(str)
			return e
		}
	}
	e.Message = excerpt(trimmed)
	return e
}

// excerpt makes a short one-line quote of a body for an error message.
func excerpt(b []byte) string {
	s := string(b)
	if len(s) > errorBodyExcerpt {
		s = s[:errorBodyExcerpt]
		s = strings.ToValidUTF8(s, "")
		s = oneLine(s) + fmt.Sprintf("… (%d bytes)", len(b))
		return s
	}
	return oneLine(strings.ToValidUTF8(s, "\uFFFD"))
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// transportError explains a failure to get any (complete) answer. It names
// the URL and suggests what to try; it never mentions header values (the
// net/http errors it wraps don't contain them either).
func transportError(method, u string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s %s: %w", method, u, err)
	}
	// *url.Error repeats the method and URL; keep only its cause.
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	return fmt.Errorf("%s %s: %w (%s)", method, u, err, hint(err))
}

func hint(err error) string {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var netErr net.Error
	switch {
	case isCertError(err):
		return "the server's TLS certificate is not trusted"
	case errors.As(err, &dnsErr):
		return "check the host name; set --url or PERCH_URL"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "the daemon did not answer in time; is it running and responsive? set --url or PERCH_URL"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return "is the daemon running? set --url or PERCH_URL"
	}
	return "the connection broke; is the daemon running? set --url or PERCH_URL"
}

func isCertError(err error) bool {
	// The x509 error types vary (unknown authority, hostname, invalid);
	// matching on the package prefix of the message covers all of them.
	return err != nil && strings.Contains(err.Error(), "x509:") ||
		err != nil && strings.Contains(err.Error(), "tls: failed to verify certificate")
}

// do performs one request/response call and returns the 2xx body. Non-2xx
// answers become *APIError; everything else is a transport error.
func (c *Client) do(ctx context.Context, method, u string, timeout time.Duration, reqBody any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if reqBody != nil {
		b, err := json.Marshal(reqBody)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode request: %w", method, u, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	for k, vs := range c.headers {
		req.Header[k] = append([]string(nil), vs...)
	}
	if reqBody != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, transportError(method, u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody+1))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Report the status even if the error body was cut short.
		return nil, newAPIError(method, u, resp.StatusCode, data)
	}
	if err != nil {
		return nil, transportError(method, u, fmt.Errorf("reading response (%d bytes so far): %w", len(data), err))
	}
	if len(data) > maxResponseBody {
		return nil, fmt.Errorf("%s %s: response larger than %d bytes", method, u, maxResponseBody)
	}
	return data, nil
}

// decodeError explains a 2xx body that isn't the JSON we expected, e.g. a
// connection cut mid-body or a proxy's HTML page.
func decodeError(method, u string, data []byte, err error) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return fmt.Errorf("%s %s: empty response body; is this a maria daemon? check --url or PERCH_URL", method, u)
	}
	return fmt.Errorf("%s %s: unreadable response (%v): %s; is this a maria daemon? check --url or PERCH_URL", method, u, err, excerpt(data))
}
