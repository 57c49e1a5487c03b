package suna

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/sanitize"
)

// api makes the REST requests of a Suna API. The token goes in the
// Authorization header only; URLs it builds never hold it, so an error can
// name them.
type api struct {
	base  string // the base URL without a trailing slash (no token, no query)
	token string
	hc    *http.Client
}

// requestTimeout bounds one REST request (the stream has none).
const requestTimeout = 30 * time.Second

// maxBody bounds a REST answer: a thread's history can be large, not
// unbounded.
const maxBody = 512 << 20

func newAPI(cfg client.Config) (*api, error) {
	base, err := parseBase(cfg.URL)
	if err != nil {
		return nil, err
	}
	hc := cfg.HTTPClient() // the Client, with cfg.Header on every request
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport}
	}
	return &api{base: base, token: cfg.Token, hc: hc}, nil
}

// parseBase checks the base URL (http or https, a host) and drops what
// must not be repeated in messages: a query, a fragment, user info.
func parseBase(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", errors.New("no URL: give the Suna API's base URL with --url (like http://localhost:8000/v1)")
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("%q is not an http(s) URL: give the Suna API's base URL with --url (like http://localhost:8000/v1)",
			redactString(s))
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return strings.TrimRight(u.String(), "/"), nil
}

// endpoint joins path segments (escaped) to the base.
func (a *api) endpoint(segs ...string) string {
	return client.Endpoint(a.base, segs...)
}

// APIError is a refusal from the server, named without the token.
type APIError struct {
	Method, URL string
	Status      int
	Message     string // the server's detail, sanitized
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("%s %s: %s", e.Method, e.URL, http.StatusText(e.Status))
	if e.Status != 0 {
		msg = fmt.Sprintf("%s %s: %d %s", e.Method, e.URL, e.Status, http.StatusText(e.Status))
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	switch e.Status {
	case http.StatusUnauthorized:
		msg += " (the Suna API wants a token: pass --token or set PERCH_TOKEN)"
	case http.StatusForbidden:
		msg += " (the token was refused: it may have expired or belong to another server; get a fresh one)"
	case http.StatusNotFound:
		msg += " (check the id, and that --url is the API base, like http://localhost:8000/v1 or …/api)"
	}
	return msg
}

// As lets errors.As find the server's answer as the system-neutral
// *client.HTTPError: the server was reached and said no.
func (e *APIError) As(target any) bool {
	if t, ok := target.(**client.HTTPError); ok && e.Status != 0 {
		*t = &client.HTTPError{Status: e.Status, Message: e.Message, URL: e.URL}
		return true
	}
	return false
}

// ErrAuth is matched (errors.Is) by 401 and 403 answers.
var ErrAuth = errors.New("authentication failed")

func (e *APIError) Is(target error) bool {
	return target == ErrAuth && (e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden)
}

// do sends a request and decodes a 2xx JSON answer into v (when non-nil).
func (a *api) do(ctx context.Context, method, u string, body []byte, contentType string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := a.send(ctx, method, u, body, contentType)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := readBody(resp, maxBody+1)
	if err != nil {
		return transportError(method, u, err, a.token)
	}
	if len(data) > maxBody {
		return fmt.Errorf("%s %s: the answer is larger than %d MiB", method, u, maxBody>>20)
	}
	if resp.StatusCode/100 != 2 {
		return &APIError{Method: method, URL: u, Status: resp.StatusCode, Message: detail(data, a.token)}
	}
	if v == nil {
		return nil
	}
	if p, ok := v.(*[]byte); ok {
		*p = data // the caller reads it
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s %s: the answer is not the JSON a Suna API sends (is --url the API base?): %w", method, u, err)
	}
	return nil
}

// send sends a request with the token and answers the server's response
// (its body for the caller to close), or a transport error.
func (a *api) send(ctx context.Context, method, u string, body []byte, contentType string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return nil, transportError(method, u, err, a.token)
	}
	return resp, nil
}

// getStream is get for an answer read as it comes: read gets a 2xx
// body and may stop early (the connection is then closed, not drained).
func (a *api) getStream(ctx context.Context, u string, read func(io.Reader) error) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := a.send(ctx, http.MethodGet, u, nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		data, _ := readBody(resp, 64<<10)
		return &APIError{Method: http.MethodGet, URL: u, Status: resp.StatusCode, Message: detail(data, a.token)}
	}
	if err := read(io.LimitReader(resp.Body, maxBody)); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// readBody reads at most limit bytes of resp's body. A body whose length
// is announced is read into a buffer of that size at once (a long
// thread's history is megabytes: growing a buffer to it by doubling cost
// a tenth of an export's processor time).
func readBody(resp *http.Response, limit int64) ([]byte, error) {
	if n := resp.ContentLength; n > 0 && n < limit {
		data := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, data); err != nil {
			return nil, err
		}
		return data, nil
	}
	return io.ReadAll(io.LimitReader(resp.Body, limit))
}

func (a *api) get(ctx context.Context, u string, v any) error {
	return a.do(ctx, http.MethodGet, u, nil, "", v)
}

// postForm posts a multipart form, as Suna's /agent/start wants.
func (a *api) postForm(ctx context.Context, u string, fields [][2]string, v any) error {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return err
		}
	}
	if err := mw.Close(); err != nil {
		return err
	}
	return a.do(ctx, http.MethodPost, u, b.Bytes(), mw.FormDataContentType(), v)
}

// detail is the server's message: FastAPI's {"detail": …} (a string or an
// object with a message), else a short excerpt.
func detail(data []byte, token string) string {
	var d struct {
		Detail  json.RawMessage `json:"detail"`
		Message string          `json:"message"`
		Error   string          `json:"error"`
	}
	msg := ""
	if json.Unmarshal(data, &d) == nil {
		var s string
		var o struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(d.Detail, &s) == nil && s != "":
			msg = s
		case json.Unmarshal(d.Detail, &o) == nil && o.Message != "":
			msg = o.Message
		case d.Message != "":
			msg = d.Message
		case d.Error != "":
			msg = d.Error
		}
	}
	if msg == "" {
		msg = string(data)
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return sanitize.Line(hideToken(msg, token))
}

// hideToken removes the token from a text the server wrote (a server may
// echo what it was sent).
func hideToken(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "REDACTED")
}

// transportError names the URL and what to do; a Go error may quote the
// URL it failed on, so the token is scrubbed from it too.
func transportError(method, u string, err error, token string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	hint := ""
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.As(err, &ne) && ne.Timeout():
		hint = " (no answer in time; is the server busy?)"
	case strings.Contains(err.Error(), "connection refused"):
		hint = " (is the Suna API running, and is --url right?)"
	}
	return client.Retryable(fmt.Errorf("%s %s: %s%s", method, u, hideToken(err.Error(), token), hint))
}

// redactString hides a token query parameter in a URL given by a user.
func redactString(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.RawQuery == "" {
		return s
	}
	return redactURL(u)
}

// redactURL writes u with its token parameter (if any) as REDACTED.
func redactURL(u *url.URL) string {
	q := u.Query()
	if q.Has("token") {
		q.Set("token", "REDACTED")
		c := *u
		c.RawQuery = q.Encode()
		return c.String()
	}
	return u.String()
}
