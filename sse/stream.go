package sse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	backoff "gopkg.in/cenkalti/backoff.v1"

	"github.com/perch-tui/perch/events"
)

// Defaults for the zero values of Config.
const (
	defaultInitial    = 500 * time.Millisecond
	defaultMax        = 10 * time.Second
	defaultCleanDelay = 500 * time.Millisecond
	defaultServer     = "the server"

	// The default client's limits: no overall timeout (a stream lives for
	// hours), only dial, TLS and response-header limits, so a hung server
	// does not look "connecting" forever.
	dialTimeout      = 10 * time.Second
	tlsTimeout       = 10 * time.Second
	streamHeaderWait = 15 * time.Second

	errorBodyLimit   = 64 << 10 // bytes of a refusal's body read for its message
	errorBodyExcerpt = 300      // bytes of a non-JSON body quoted in an error
)

// Config says what to subscribe to and how. Only URL is required.
type Config struct {
	// URL is called before every connection attempt, the first and each
	// reconnect, so a caller can carry resume parameters (a last event id)
	// in the query. Its result must be an absolute http(s) URL. A "token"
	// query parameter is redacted in every error and state this package
	// reports.
	URL func() string
	// Header is sent on every attempt, to the URL's host only (not to a
	// redirect's target on another host). Subscribe copies it.
	Header http.Header
	// Client's Transport, CheckRedirect and Jar are used; its Timeout is
	// not, as it would cut the stream. nil: a default streaming client.
	Client *http.Client
	// MaxEventBytes bounds one event, framing included; 0:
	// MaxEventBytes. A larger event ends the connection (retried).
	MaxEventBytes int
	// Activity, if not nil, follows when bytes last came in.
	Activity *Activity
	// OnConnect is called after each connection that the server answered
	// with a 200 event stream, before its first frame, on the same
	// goroutine as onFrame (after the live state is reported).
	OnConnect func()
	// Initial and Max bound the reconnect backoff; CleanCloseDelay is the
	// pause before resubscribing after the server ended a stream cleanly.
	// 0: 500 ms, 10 s, 500 ms.
	Initial, Max, CleanCloseDelay time.Duration
	// Borrow: onFrame keeps no part of a frame's Data after it returns,
	// so an event of one data line is handed out of the reader's buffer
	// without a copy (the buffer is read into again after onFrame).
	Borrow bool
	// Server names the server in error hints ("a maria daemon", "a Suna
	// API"); "": "the server".
	Server string
}

// ErrStreamClosed is the "last error" shown while resubscribing after the
// server ended a stream cleanly (maria never does; some proxies do, after
// each replay).
var ErrStreamClosed = errors.New("the server closed the stream")

// StatusError is an answer that is not an event stream: a non-200 status,
// or a 200 of another content type.
type StatusError struct {
	URL     string // token redacted
	Status  int
	Message string // the server's message, or why the answer was refused
	// Body is the start of the answer's body (up to 64 KiB, token
	// redacted), for callers that decode their server's error format.
	Body []byte
}

func (e *StatusError) Error() string {
	status := http.StatusText(e.Status)
	if status == "" {
		status = "status"
	}
	s := fmt.Sprintf("GET %s: %d %s", e.URL, e.Status, status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// streamTransport adds the caller's headers to every stream (re)connect,
// to the URL's host only.
type streamTransport struct {
	base    http.RoundTripper
	headers http.Header  // read-only
	host    atomic.Value // string: headers go to this host only, not to redirect targets
}

func (t *streamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if host, _ := t.host.Load().(string); len(t.headers) > 0 && req.URL.Host == host {
		req = req.Clone(req.Context()) // a RoundTripper must not modify its request
		for k, vs := range t.headers {
			req.Header[k] = append([]string(nil), vs...)
		}
	}
	return t.base.RoundTrip(req)
}

// Subscribe subscribes to an SSE endpoint and keeps it open like a
// browser's EventSource: it reconnects after errors with exponential
// backoff (Initial up to Max, forever, reset by every 200) and after clean
// closes, and gives up only on 204 or a 4xx other than 408/429, or on a 200
// that is not an event stream, returning a *StatusError that names the URL,
// status and the server's message.
//
// Each connection is framed by r3labs' EventStreamReader, on the calling
// goroutine: every complete event, whatever its name, goes to onFrame as
// it is read; a server that replays its log on each connection makes
// callers dedupe. A truncated last event is never delivered. Each attempt
// sends the last event id seen as Last-Event-ID. onFrame, onState and
// OnConnect run on the calling goroutine, one at a time, and never after
// Subscribe returns; a slow onFrame slows the reading (backpressure).
// Cancelling ctx ends the stream at once; Subscribe then returns ctx.Err()
// and leaves no goroutine behind. Each frame's data is its own.
func Subscribe(ctx context.Context, cfg Config, onFrame func(events.Frame), onState func(ConnState)) error {
	if onFrame == nil {
		onFrame = func(events.Frame) {}
	}
	if onState == nil {
		onState = func(ConnState) {}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if cfg.URL == nil {
		return errors.New("sse: Config.URL is nil")
	}
	if cfg.Initial <= 0 {
		cfg.Initial = defaultInitial
	}
	if cfg.Max <= 0 {
		cfg.Max = defaultMax
	}
	if cfg.CleanCloseDelay <= 0 {
		cfg.CleanCloseDelay = defaultCleanDelay
	}
	if cfg.MaxEventBytes <= 0 {
		cfg.MaxEventBytes = MaxEventBytes
	}
	if cfg.Server == "" {
		cfg.Server = defaultServer
	}
	server := cfg.Server

	// The attempt's URL, as requested and as reported (token redacted).
	var raw string
	var shown redaction
	next := func() error {
		raw = cfg.URL()
		shown = redact(raw)
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("GET %s: not an http(s) URL; check --url", shown.url)
		}
		return nil
	}
	if err := next(); err != nil {
		err = shown.scrub(err)
		onState(ConnState{Phase: PhaseFailed, Err: err, Since: time.Now()})
		return err
	}

	tr := &streamTransport{headers: cfg.Header.Clone()}
	setHost := func() {
		host := ""
		if u, err := url.Parse(raw); err == nil {
			host = u.Host
		}
		tr.host.Store(host)
	}
	hc := &http.Client{Transport: tr}
	if c := cfg.Client; c != nil {
		tr.base = c.Transport
		hc.CheckRedirect, hc.Jar = c.CheckRedirect, c.Jar
	}
	if tr.base == nil {
		if cfg.Client != nil {
			tr.base = http.DefaultTransport
		} else {
			dt := defaultTransport()
			defer dt.CloseIdleConnections()
			tr.base = dt
		}
	}

	b := backoff.NewExponentialBackOff()
	b.InitialInterval = cfg.Initial
	b.MaxInterval = cfg.Max
	b.MaxElapsedTime = 0 // never give up
	b.Reset()

	attempt := 0
	state := func(s ConnState) {
		s.Since = time.Now()
		onState(s)
	}
	var lastID string // the last event id seen, sent as Last-Event-ID on each attempt
	// connect makes one attempt: nil is a clean close by the server, a
	// *permanent error ends the stream.
	connect := func() error {
		setHost()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Cache-Control", "no-cache")
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK && !isEventStream(resp.Header.Get("Content-Type")) {
			// A 200 that isn't an event stream (a proxy's login page, a
			// --url pointing at some other server) would never yield an
			// event and would be retried forever; say so instead.
			return permanent{&StatusError{URL: shown.url, Status: resp.StatusCode,
				Message: fmt.Sprintf("not an event stream (Content-Type %q); is this %s? check --url or PERCH_URL", resp.Header.Get("Content-Type"), server)}}
		}
		if resp.StatusCode != http.StatusOK {
			data, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
			data = []byte(shown.scrubString(string(data)))
			se := &StatusError{URL: shown.url, Status: resp.StatusCode, Message: serverMessage(data), Body: data}
			if resp.StatusCode == http.StatusNoContent && se.Message == "" {
				se.Message = server + " has no stream here"
			}
			if permanentStatus(resp.StatusCode) {
				return permanent{se}
			}
			return se
		}
		// A good connection: the next failure starts the backoff over.
		b.Reset()
		attempt = 0
		state(ConnState{Phase: PhaseLive})
		if cfg.OnConnect != nil {
			cfg.OnConnect()
		}
		err = readEvents(resp.Body, cfg.MaxEventBytes, false, cfg.Borrow, cfg.Activity, func(e *event) error {
			if e.hasID && !bytes.ContainsRune(e.id, 0) {
				lastID = string(e.id)
			}
			if e.content() && ctx.Err() == nil {
				onFrame(events.Frame{Name: e.name, Data: e.data})
			}
			return nil
		})
		switch {
		case errors.Is(err, ErrTruncated):
			// The half event proves the stream was broken, not closed.
			return io.ErrUnexpectedEOF
		case errors.Is(err, ErrEventTooLarge):
			return fmt.Errorf("%w: more than %d MiB", errEventTooLarge, cfg.MaxEventBytes>>20)
		}
		return err
	}

	state(ConnState{Phase: PhaseConnecting})
	for {
		err := connect()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var p permanent
		if errors.As(err, &p) {
			err = streamError(shown, server, p.error)
			state(ConnState{Phase: PhaseFailed, Attempt: attempt, Err: err})
			return err
		}
		attempt++
		wait := cfg.CleanCloseDelay
		if err == nil {
			err = ErrStreamClosed
		} else {
			wait = b.NextBackOff()
			err = streamError(shown, server, err)
		}
		state(ConnState{Phase: PhaseReconnecting, Attempt: attempt, RetryIn: wait, Err: err})
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		_ = next() // a bad URL is reported by the attempt itself, and retried
	}
}

// permanent marks an attempt's error that ends the stream.
type permanent struct{ error }

// errEventTooLarge: an event outgrew the stream's limit; the stream can't
// be read past it.
var errEventTooLarge = errors.New("event too large")

// defaultTransport is a streaming transport: proxy from the environment,
// TLS verification on, a response-header limit, and no keep-alives (a
// stream connection is never worth reusing, an idle one only lingers).
func defaultTransport() *http.Transport {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   tlsTimeout,
		ResponseHeaderTimeout: streamHeaderWait,
		DisableKeepAlives:     true,
		ForceAttemptHTTP2:     true,
		// A replay comes as one small chunk per event: net/http's 4 KB
		// read buffer costs two reads from the socket per chunk.
		ReadBufferSize: 256 << 10,
	}
}

// isEventStream accepts text/event-stream with any parameters, and a
// missing Content-Type (lenient towards minimal servers).
func isEventStream(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "text/event-stream"
}

// permanentStatus: 204 (the SSE way to say "stop") and 4xx except request
// timeout and rate limiting end a stream; everything else is retried.
func permanentStatus(code int) bool {
	switch {
	case code == http.StatusNoContent:
		return true
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return false
	case code >= 400 && code < 500:
		return true
	}
	return false
}
