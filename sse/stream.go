package sse

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	r3 "github.com/r3labs/sse/v2"
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
	// Progress, if not nil, follows the incoming bytes.
	Progress *Progress
	// OnConnect is called after each connection that the server answered
	// with a 200 event stream, before its first frame, on the same
	// goroutine as onFrame (after the live state is reported).
	OnConnect func()
	// Initial and Max bound the reconnect backoff; CleanCloseDelay is the
	// pause before resubscribing after the server ended a stream cleanly.
	// 0: 500 ms, 10 s, 500 ms.
	Initial, Max, CleanCloseDelay time.Duration
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

// streamTransport adds the caller's headers to every stream (re)connect and
// wraps 200 bodies in an eventReader. Non-200 bodies stay raw so the
// response validator can quote the server's error.
type streamTransport struct {
	base    http.RoundTripper
	headers http.Header  // read-only
	host    atomic.Value // string: headers go to this host only, not to redirect targets
	max     int
	side    *streamSide
}

func (t *streamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if host, _ := t.host.Load().(string); len(t.headers) > 0 && req.URL.Host == host {
		req = req.Clone(req.Context()) // a RoundTripper must not modify its request
		for k, vs := range t.headers {
			req.Header[k] = append([]string(nil), vs...)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusOK {
		resp.Body = newEventReader(resp.Body, t.max, t.side)
	}
	return resp, nil
}

// sideEvent names the stub events that stand for side-lined ones.
const sideEvent = "perch.sidelined"

// streamSide is what a stream shares with its connections' event readers:
// the events they pass around r3labs (see eventReader), in runs, each run
// named by a stub event that carries a token no server can guess, and the
// progress of the bytes coming in.
type streamSide struct {
	mu     sync.Mutex
	token  string
	seq    uint64
	queue  []sidelined
	report *Progress // may be nil
}

type sidelined struct {
	key    string
	frames []events.Frame
}

func newStreamSide(p *Progress) *streamSide {
	var r [12]byte
	_, _ = rand.Read(r[:])
	return &streamSide{token: hex.EncodeToString(r[:]) + "-", report: p}
}

// put queues a run of frames and returns the stub event that stands for
// it; id (copied) is the last event id among them.
func (s *streamSide) put(frames []events.Frame, id []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	key := s.token + strconv.FormatUint(s.seq, 10)
	s.queue = append(s.queue, sidelined{key, frames})
	stub := "event: " + sideEvent + "\ndata: " + key + "\n\n"
	if len(id) > 0 {
		stub = "id: " + string(id) + "\n" + stub // for r3labs' Last-Event-ID
	}
	return []byte(stub)
}

// take returns the frames a stub event stands for; runs queued before it
// were lost with their connection and are dropped.
func (s *streamSide) take(e *r3.Event) ([]events.Frame, bool) {
	if string(e.Event) != sideEvent {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, q := range s.queue {
		if q.key == string(e.Data) {
			lost := 0
			for _, l := range s.queue[:i] {
				lost += len(l.frames)
			}
			clear(s.queue[:i+1])
			s.queue = s.queue[i+1:]
			s.delivered(lost) // lost with their connection
			return q.frames, true
		}
	}
	return nil, false // a server's own event of that name
}

// receiving reports what a read brought: n bytes, and whether an event is
// now partly received.
func (s *streamSide) receiving(partial bool, n, whole int) {
	if p := s.report; p != nil {
		if whole > 0 {
			p.inflight.Add(int64(whole)) // before last: see Settled
		}
		p.partial.Store(partial)
		if n > 0 {
			p.total.Add(int64(n))
			p.last.Store(time.Now().UnixNano())
		}
	}
}

// delivered reports n events handed to onFrame (or dropped).
func (s *streamSide) delivered(n int) {
	if p := s.report; p != nil && n > 0 {
		p.inflight.Add(-int64(n))
	}
}

// Progress tells a caller that waits for a stream to go quiet whether it
// really is: a large event can take longer to arrive than the quiet time,
// and no frame shows while it does. Its zero value is ready to use.
type Progress struct {
	partial atomic.Bool
	last    atomic.Int64 // unix nanoseconds of the last bytes read
	// inflight counts the events read whole but not yet handed to onFrame
	// (parsed, or on their way through r3labs as stubs).
	inflight atomic.Int64
	total    atomic.Int64 // bytes read, every connection
}

// Bytes is how many bytes of events have been read, over every
// connection.
func (p *Progress) Bytes() int64 { return p.total.Load() }

// Settled is Busy's opposite made strict for a short quiet window: no
// event partly received, none read and still on its way to onFrame, and
// no bytes within the last d. An event delivered to onFrame is the
// caller's to account for (its queue).
func (p *Progress) Settled(d time.Duration) bool {
	return p.inflight.Load() <= 0 && !p.Busy(d)
}

// Pending is how many events were read whole and not yet handed to
// onFrame. Inside onFrame it counts the frame in hand too: 1 there means
// nothing read is behind it, so a caller that gathers frames into batches
// (one hand-over to another goroutine per batch, not per frame) sends its
// batch then rather than wait for a frame that may not come soon.
func (p *Progress) Pending() int64 { return p.inflight.Load() }

// Quiet is how long no byte has been read and no event has been partly
// received (0 while one is, or before any byte).
func (p *Progress) Quiet() time.Duration {
	last := p.last.Load()
	if last == 0 || p.partial.Load() {
		return 0
	}
	return max(time.Since(time.Unix(0, last)), 0)
}

// Busy reports whether an event is partly received, or bytes arrived
// within the last d.
func (p *Progress) Busy(d time.Duration) bool {
	if p.partial.Load() {
		return true
	}
	last := p.last.Load()
	return last != 0 && time.Since(time.Unix(0, last)) < d
}

// Subscribe subscribes to an SSE endpoint and keeps it open like a
// browser's EventSource: it reconnects after errors with exponential
// backoff (Initial up to Max, forever, reset by every 200) and after clean
// closes, and gives up only on 204 or a 4xx other than 408/429, or on a 200
// that is not an event stream, returning a *StatusError that names the URL,
// status and the server's message.
//
// Every complete event, whatever its name, goes to onFrame; a server that
// replays its log on each connection makes callers dedupe. A truncated
// last event is never delivered. onFrame, onState and OnConnect run on the
// calling goroutine, one at a time, and never after Subscribe returns.
// Cancelling ctx ends the stream at once; Subscribe then returns ctx.Err()
// and leaves no goroutine behind. Each frame's data is its own: a large one
// is not copied on its way (see eventReader).
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

	side := newStreamSide(cfg.Progress)
	tr := &streamTransport{headers: cfg.Header.Clone(), max: cfg.MaxEventBytes, side: side}
	setHost := func() {
		host := ""
		if u, err := url.Parse(raw); err == nil {
			host = u.Host
		}
		tr.host.Store(host)
	}
	setHost()
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

	// One backoff and one r3labs client per stream: neither is goroutine-safe.
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = cfg.Initial
	b.MaxInterval = cfg.Max
	b.MaxElapsedTime = 0 // never give up (the 15 min default ends streams for good)
	b.Reset()

	sc := r3.NewClient(raw, r3.ClientMaxBufferSize(cfg.MaxEventBytes))
	sc.Connection = hc                                 // headers are added by its transport, not sc.Headers
	sc.ReconnectStrategy = backoff.WithContext(b, ctx) // ctx cancel interrupts backoff sleeps

	attempt := 0
	state := func(s ConnState) {
		s.Since = time.Now()
		onState(s)
	}
	// moveOn picks the next attempt's URL; a bad one is reported by the
	// attempt itself (r3labs cannot build the request) and retried.
	moveOn := func() {
		_ = next()
		sc.URL = raw
		setHost()
	}
	sc.ReconnectNotify = func(err error, wait time.Duration) {
		if ctx.Err() != nil {
			return // shutting down; this "reconnect" won't happen
		}
		attempt++
		state(ConnState{Phase: PhaseReconnecting, Attempt: attempt, RetryIn: wait, Err: streamError(shown, server, err)})
		moveOn() // r3labs reads sc.URL again for the retry
	}
	sc.ResponseValidator = func(_ *r3.Client, resp *http.Response) error {
		if resp.StatusCode == http.StatusOK && !isEventStream(resp.Header.Get("Content-Type")) {
			// A 200 that isn't an event stream (a proxy's login page, a
			// --url pointing at some other server) would never yield an
			// event and would be retried forever; say so instead.
			resp.Body.Close()
			return backoff.Permanent(&StatusError{URL: shown.url, Status: resp.StatusCode,
				Message: fmt.Sprintf("not an event stream (Content-Type %q); is this %s? check --url or PERCH_URL", resp.Header.Get("Content-Type"), server)})
		}
		if resp.StatusCode == http.StatusOK {
			// A good connection: the next failure starts the backoff over.
			b.Reset()
			attempt = 0
			state(ConnState{Phase: PhaseLive})
			if cfg.OnConnect != nil {
				cfg.OnConnect()
			}
			return nil
		}
		// r3labs doesn't close the body when the validator fails.
		data, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
		resp.Body.Close()
		data = []byte(shown.scrubString(string(data)))
		se := &StatusError{URL: shown.url, Status: resp.StatusCode, Message: serverMessage(data), Body: data}
		if resp.StatusCode == http.StatusNoContent && se.Message == "" {
			se.Message = server + " has no stream here"
		}
		if permanentStatus(resp.StatusCode) {
			return backoff.Permanent(se)
		}
		return se
	}

	handler := func(e *r3.Event) {
		if fs, ok := side.take(e); ok {
			for i, f := range fs {
				if ctx.Err() != nil {
					side.delivered(len(fs) - i) // stopped: not delivered
					return
				}
				onFrame(f)
				side.delivered(1)
			}
			return
		}
		onFrame(events.Frame{Name: string(e.Event), Data: e.Data})
	}

	state(ConnState{Phase: PhaseConnecting})
	for {
		err := sc.SubscribeRawWithContext(ctx, handler)
		// r3labs maps a cancelled body read to a clean EOF (nil), so the
		// context, not err, says whether we were stopped.
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			// With MaxElapsedTime = 0 the only way out of the retry loop
			// besides ctx is a permanent error from the validator.
			err = streamError(shown, server, err)
			state(ConnState{Phase: PhaseFailed, Attempt: attempt, Err: err})
			return err
		}
		// Clean close (r3labs doesn't reconnect on its own): resubscribe
		// after a short pause.
		attempt++
		state(ConnState{Phase: PhaseReconnecting, Attempt: attempt, RetryIn: cfg.CleanCloseDelay, Err: ErrStreamClosed})
		t := time.NewTimer(cfg.CleanCloseDelay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		moveOn()
	}
}

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
