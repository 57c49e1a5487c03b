package pynchy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// subscribe follows GET /api/events, reconnecting with backoff forever
// until ctx ends. onConnect runs after each connect, before its first
// frame; every callback runs on the caller's goroutine.
//
// pynchy's frames are `data:` lines only, so this reader needs none of
// the rest of SSE.
func (l *Live) subscribe(ctx context.Context, onConnect func(), onFrame func(events.Frame), onState func(backend.ConnState)) error {
	const initial, maxDelay = 200 * time.Millisecond, 5 * time.Second
	u := l.base + "/api/events"
	delay := initial
	attempt := 0
	onState(client.ConnState{Phase: client.PhaseConnecting, Since: time.Now()})
	for {
		err := l.streamOnce(ctx, u, func() {
			attempt, delay = 0, initial
			onState(client.ConnState{Phase: client.PhaseLive, Since: time.Now()})
			onConnect()
		}, onFrame)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var perm *permanentError
		if errors.As(err, &perm) {
			onState(client.ConnState{Phase: client.PhaseFailed, Attempt: attempt, Err: err, Since: time.Now()})
			return err
		}
		attempt++
		onState(client.ConnState{Phase: client.PhaseReconnecting, Attempt: attempt, RetryIn: delay, Err: err, Since: time.Now()})
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(delay*2, maxDelay)
	}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// maxFrame bounds one frame's data.
const maxFrame = 64 << 20

func (l *Live) streamOnce(ctx context.Context, u string, connected func(), onFrame func(events.Frame)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return &permanentError{err}
	}
	req.Header.Set("Accept", "text/event-stream")
	if l.token != "" {
		req.Header.Set("Authorization", "Bearer "+l.token)
	}
	resp, err := l.stream.Do(req)
	if err != nil {
		return fmt.Errorf("the pynchy server at %s does not answer: %w", l.base, stripURLError(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests,
		resp.StatusCode == http.StatusNoContent:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return &permanentError{&httpError{method: http.MethodGet, url: u, status: resp.StatusCode, msg: serverMessage(body)}}
	default:
		return &httpError{method: http.MethodGet, url: u, status: resp.StatusCode}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return &permanentError{fmt.Errorf("GET %s answered %q, not an event stream: is %s a pynchy server?", u, mt, l.base)}
	}
	connected()
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var data []byte
	has := false
	for {
		line, err := readLine(r)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("the server closed the stream")
			}
			return err
		}
		switch {
		case len(line) == 0:
			if has {
				onFrame(events.Frame{Data: data})
			}
			data, has = nil, false
		case line[0] == ':':
		default:
			name, val, _ := bytes.Cut(line, []byte(":"))
			val = bytes.TrimPrefix(val, []byte(" "))
			if string(name) == "data" {
				if has {
					data = append(data, '\n')
				}
				if len(data)+len(val) > maxFrame {
					return fmt.Errorf("a frame of the stream is larger than %d MB", maxFrame>>20)
				}
				data = append(data, val...)
				has = true
			}
		}
	}
}

// readLine reads one line without its end (\n, \r\n or \r\n).
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxFrame {
			return nil, fmt.Errorf("a line of the stream is larger than %d MB", maxFrame>>20)
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}
