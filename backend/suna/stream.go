package suna

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// streamConfig mirrors the shared sse package's Config for the fields this
// backend uses.
type streamConfig struct {
	URL        func() string
	Header     http.Header
	Client     *http.Client
	OnConnect  func()
	Initial    time.Duration
	Max        time.Duration
	Server     string
	redactFrom string // the token, scrubbed from errors
}

// subscribe follows an SSE stream with reconnects (backoff, reset on each
// 200), until ctx ends or the server refuses for good (4xx other than
// 408/429, or 204). onFrame and onState run on the caller's goroutine.
func subscribe(ctx context.Context, cfg streamConfig, onFrame func(events.Frame), onState func(client.ConnState)) error {
	if cfg.Initial <= 0 {
		cfg.Initial = 500 * time.Millisecond
	}
	if cfg.Max <= 0 {
		cfg.Max = 10 * time.Second
	}
	hc := cfg.Client
	if hc == nil {
		hc = &http.Client{}
	}
	delay := cfg.Initial
	attempt := 0
	onState(client.ConnState{Phase: client.PhaseConnecting, Since: time.Now()})
	for {
		raw := cfg.URL()
		shown := redactStream(raw)
		live, err := streamOnce(ctx, hc, raw, cfg, onFrame, onState)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var perm *permanentError
		if errors.As(err, &perm) {
			st := client.ConnState{Phase: client.PhaseFailed, Err: err, Since: time.Now()}
			onState(st)
			return err
		}
		if live {
			delay, attempt = cfg.Initial, 0
		}
		attempt++
		if err == nil {
			err = fmt.Errorf("%s closed the stream %s", cfg.Server, shown)
		}
		onState(client.ConnState{Phase: client.PhaseReconnecting, Attempt: attempt, RetryIn: delay, Err: err, Since: time.Now()})
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(delay*2, cfg.Max)
	}
}

type permanentError struct{ error }

func (e *permanentError) Unwrap() error { return e.error }

func streamOnce(ctx context.Context, hc *http.Client, raw string, cfg streamConfig, onFrame func(events.Frame),
	onState func(client.ConnState)) (bool, error) {
	shown := redactStream(raw)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return false, &permanentError{fmt.Errorf("GET %s: %v", shown, hideToken(err.Error(), cfg.redactFrom))}
	}
	for k, v := range cfg.Header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return false, fmt.Errorf("GET %s: %s", shown, hideToken(err.Error(), cfg.redactFrom))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNoContent:
		return false, &permanentError{fmt.Errorf("GET %s: %s ended the stream (204)", shown, cfg.Server)}
	case resp.StatusCode/100 == 4 && resp.StatusCode != 408 && resp.StatusCode != 429:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return false, &permanentError{&APIError{Method: "GET", URL: shown, Status: resp.StatusCode,
			Message: detail(body, cfg.redactFrom)}}
	case resp.StatusCode != http.StatusOK:
		return false, fmt.Errorf("GET %s: %d %s", shown, resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false, &permanentError{fmt.Errorf("GET %s: answered %q, not an event stream: is --url the API base of %s?",
			shown, mt, cfg.Server)}
	}
	if cfg.OnConnect != nil {
		cfg.OnConnect()
	}
	onState(client.ConnState{Phase: client.PhaseLive, Since: time.Now()})
	err = events.ReadFrames(resp.Body, func(f events.Frame) error {
		onFrame(f)
		return nil
	})
	if err != nil && ctx.Err() == nil {
		return true, fmt.Errorf("GET %s: %v", shown, err)
	}
	return true, nil
}

// redactStream is a stream URL fit to print: its token parameter hidden.
func redactStream(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a stream URL)"
	}
	return redactURL(u)
}
