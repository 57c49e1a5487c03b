package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	sse "github.com/r3labs/sse/v2"
	backoff "gopkg.in/cenkalti/backoff.v1"

	"github.com/perch-tui/perch/events"
)

// maxEventBytes bounds one SSE event (framing included), as for recorded
// streams: events.MaxEventBytes.
const maxEventBytes = events.MaxEventBytes

// ErrStreamClosed is the "last error" shown while resubscribing after the
// daemon ended a stream cleanly (maria never does; some proxies do, after
// each replay).
var ErrStreamClosed = errors.New("the daemon closed the stream")

// streamTransport adds the client's headers to every stream (re)connect and
// wraps 200 bodies in an eventReader. Non-200 bodies stay raw so the
// response validator can quote the daemon's error.
type streamTransport struct {
	base    http.RoundTripper
	headers http.Header // read-only after New
	host    string      // headers go to the daemon's host only, not to redirect targets
}

func (t *streamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && req.URL.Host == t.host {
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
		side, _ := req.Context().Value(sideKey{}).(*streamSide)
		resp.Body = newEventReader(resp.Body, maxEventBytes, side)
	}
	return resp, nil
}

// sideKey carries a stream's side, through the request context, to the
// event readers of its connections.
type sideKey struct{}

// sideEvent names the stub events that stand for side-lined ones.
const sideEvent = "perch.sidelined"

// streamSide is what a stream shares with its connections' event readers:
// the large events they pass around r3labs (see eventReader), each named by
// a stub event that carries a token no server can guess, and the progress of
// the bytes coming in.
type streamSide struct {
	mu     sync.Mutex
	token  string
	seq    uint64
	queue  []sidelined
	report *Progress // may be nil
}

type sidelined struct {
	key string
	f   events.Frame
}

func newStreamSide(p *Progress) *streamSide {
	var r [12]byte
	_, _ = rand.Read(r[:])
	return &streamSide{token: hex.EncodeToString(r[:]) + "-", report: p}
}

// put queues a frame and returns the stub event that stands for it.
func (s *streamSide) put(f events.Frame, id []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	key := s.token + strconv.FormatUint(s.seq, 10)
	s.queue = append(s.queue, sidelined{key, f})
	stub := "event: " + sideEvent + "\ndata: " + key + "\n\n"
	if len(id) > 0 {
		stub = "id: " + string(id) + "\n" + stub // for r3labs' Last-Event-ID
	}
	return []byte(stub)
}

// take returns the frame a stub event stands for; frames queued before it
// were lost with their connection and are dropped.
func (s *streamSide) take(e *sse.Event) (events.Frame, bool) {
	if string(e.Event) != sideEvent {
		return events.Frame{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, q := range s.queue {
		if q.key == string(e.Data) {
			clear(s.queue[:i+1])
			s.queue = s.queue[i+1:]
			s.delivered(i) // lost with their connection
			return q.f, true
		}
	}
	return events.Frame{}, false // a server's own event of that name
}

// receiving reports what a read brought: n bytes, whole events (now on
// their way to onFrame), and whether an event is now partly received.
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

// Busy reports whether an event is partly received, or bytes arrived
// within the last d.
func (p *Progress) Busy(d time.Duration) bool {
	if p.partial.Load() {
		return true
	}
	last := p.last.Load()
	return last != 0 && time.Since(time.Unix(0, last)) < d
}

// StreamTask follows a task's events (GET /task/{id}/events) until ctx is
// cancelled or the daemon refuses the stream for good. See stream.
func (c *Client) StreamTask(ctx context.Context, taskID string, onFrame func(events.Frame), onState func(ConnState)) error {
	return c.stream(ctx, c.endpoint("task", taskID, "events"), onFrame, onState, nil)
}

// StreamTaskProgress is StreamTask that also keeps p up to date with the
// bytes coming in, for a caller that waits for the stream to go quiet.
func (c *Client) StreamTaskProgress(ctx context.Context, taskID string, onFrame func(events.Frame), onState func(ConnState), p *Progress) error {
	return c.stream(ctx, c.endpoint("task", taskID, "events"), onFrame, onState, p)
}

// StreamDaemon follows the daemon-wide events (GET /events): task list
// snapshots, task status changes, auth events. See stream.
func (c *Client) StreamDaemon(ctx context.Context, onFrame func(events.Frame), onState func(ConnState)) error {
	return c.stream(ctx, c.endpoint("events"), onFrame, onState, nil)
}

// stream subscribes to an SSE endpoint and keeps it open like a browser's
// EventSource: it reconnects after errors with exponential backoff (500 ms
// up to 10 s, forever, reset by every 200) and after clean closes, and gives
// up only on 204 or a 4xx other than 408/429, returning an *APIError that
// names the URL, status and the daemon's message.
//
// Every complete event, whatever its name, goes to onFrame; the daemon
// replays its whole log on each connection, so callers dedupe. A truncated
// last event is never delivered. onFrame and onState run on the calling
// goroutine, one at a time, and never after stream returns. Cancelling ctx
// ends the stream at once; stream then returns ctx.Err() and leaves no
// goroutine behind. Each frame's data is its own: a large one is not copied
// on its way (see eventReader). p, if not nil, follows the incoming bytes.
func (c *Client) stream(ctx context.Context, u string, onFrame func(events.Frame), onState func(ConnState), p *Progress) error {
	if onFrame == nil {
		onFrame = func(events.Frame) {}
	}
	if onState == nil {
		onState = func(ConnState) {}
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	// One backoff and one sse.Client per stream: neither is goroutine-safe.
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = c.timing.initial
	b.MaxInterval = c.timing.max
	b.MaxElapsedTime = 0 // never give up (the 15 min default ends streams for good)
	b.Reset()

	sc := sse.NewClient(u, sse.ClientMaxBufferSize(maxEventBytes))
	sc.Connection = c.streamHC                         // headers are added by its transport, not sc.Headers
	sc.ReconnectStrategy = backoff.WithContext(b, ctx) // ctx cancel interrupts backoff sleeps

	attempt := 0
	state := func(s ConnState) {
		s.Since = time.Now()
		onState(s)
	}
	sc.ReconnectNotify = func(err error, next time.Duration) {
		if ctx.Err() != nil {
			return // shutting down; this "reconnect" won't happen
		}
		attempt++
		state(ConnState{Phase: PhaseReconnecting, Attempt: attempt, RetryIn: next, Err: streamError(u, err)})
	}
	sc.ResponseValidator = func(_ *sse.Client, resp *http.Response) error {
		if resp.StatusCode == http.StatusOK && !isEventStream(resp.Header.Get("Content-Type")) {
			// A 200 that isn't an event stream (a proxy's login page, a
			// --url pointing at some other server) would never yield an
			// event and would be retried forever; say so instead.
			resp.Body.Close()
			return backoff.Permanent(&APIError{Method: http.MethodGet, URL: u, Status: resp.StatusCode,
				Message: fmt.Sprintf("not an event stream (Content-Type %q); is this a maria daemon? check --url or PERCH_URL", resp.Header.Get("Content-Type"))})
		}
		if resp.StatusCode == http.StatusOK {
			// A good connection: the next failure starts the backoff over.
			b.Reset()
			attempt = 0
			state(ConnState{Phase: PhaseLive})
			return nil
		}
		// r3labs doesn't close the body when the validator fails.
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		apiErr := newAPIError(http.MethodGet, u, resp.StatusCode, data)
		if resp.StatusCode == http.StatusNoContent && apiErr.Message == "" {
			apiErr.Message = "the daemon has no stream here"
		}
		if permanentStatus(resp.StatusCode) {
			return backoff.Permanent(apiErr)
		}
		return apiErr
	}

	side := newStreamSide(p)
	handler := func(e *sse.Event) {
		if f, ok := side.take(e); ok {
			onFrame(f)
			side.delivered(1)
			return
		}
		onFrame(events.Frame{Name: string(e.Event), Data: e.Data})
	}
	ctx = context.WithValue(ctx, sideKey{}, side)

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
			err = streamError(u, err)
			state(ConnState{Phase: PhaseFailed, Attempt: attempt, Err: err})
			return err
		}
		// Clean close (r3labs doesn't reconnect on its own): resubscribe
		// after a short pause; the daemon replays everything anyway.
		attempt++
		state(ConnState{Phase: PhaseReconnecting, Attempt: attempt, RetryIn: c.timing.cleanDelay, Err: ErrStreamClosed})
		t := time.NewTimer(c.timing.cleanDelay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
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

// streamError gives a stream failure the URL and a hint, unless it already
// is an *APIError (which names both).
func streamError(u string, err error) error {
	var ae *APIError
	if errors.As(err, &ae) {
		return err
	}
	return transportError(http.MethodGet, u, err)
}
