package pynchy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/internal/jsonx"
	"github.com/perch-tui/perch/sanitize"
)

// Live is the pynchy backend: a pynchy server's HTTP API (docs/live/pynchy.md).
// Sessions are its chats (groups).
type Live struct {
	base   string // scheme://host[:port][/prefix], without a trailing slash
	token  string
	client *http.Client // requests, with a timeout
	stream *http.Client // the event stream (nil: sse's default client)

	mu     sync.Mutex
	active map[string]bool // chats a followed stream saw working
}

var _ client.Backend = (*Live)(nil)

// requestTimeout bounds every request but the event stream.
const requestTimeout = 30 * time.Second

// historyLimit is the limit perch asks /api/messages for: pynchy returns
// the newest rows only, and a transcript needs them all.
const historyLimit = 1000000

// maxResponse bounds a response body perch reads whole (the history of a
// long chat is the largest).
const maxResponse = 512 << 20

// Open returns the pynchy backend for cfg.URL (like http://localhost:8484).
// It does no IO.
func Open(cfg client.Config) (client.Backend, error) {
	l, err := open(cfg)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return l, nil
}

func open(cfg client.Config) (*Live, error) {
	u, err := url.Parse(strings.TrimSpace(cfg.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("pynchy: %q is not a server URL; give its base, like http://localhost:8484", redactURL(cfg.URL))
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	l := &Live{base: strings.TrimRight(u.String(), "/"), token: cfg.Token, active: map[string]bool{}}
	if hc := cfg.HTTPClient(); hc != nil { // the Client, with cfg.Header on every request
		l.client, l.stream = hc, hc
	} else {
		l.client = &http.Client{Timeout: requestTimeout}
	}
	return l, nil
}

// redactURL hides a token query parameter and user info of a URL that
// could not be parsed well enough to be used.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(an unreadable URL)"
	}
	u.User = nil
	q := u.Query()
	if q.Has("token") {
		q.Set("token", "REDACTED")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Name is client.Pynchy.
func (l *Live) Name() string { return client.Pynchy }

// URL is the server's base URL.
func (l *Live) URL() string { return l.base }

// Capabilities: pynchy takes follow-ups and pipes those sent while the
// agent works into the run; its runs report cost. It has no endpoint to
// stop a run or to create a chat.
func (l *Live) Capabilities() client.Capabilities {
	return client.Capabilities{Send: true, PipesFollowUps: true, Cost: true}
}

// httpError is a non-2xx answer.
type httpError struct {
	method, url string
	status      int
	msg         string
	pynchy      bool // the answer is pynchy's own {"error": …}
}

func (e *httpError) Error() string {
	s := fmt.Sprintf("%s %s: %s", e.method, e.url, http.StatusText(e.status))
	if e.status != 0 {
		s = fmt.Sprintf("%s %s: HTTP %d", e.method, e.url, e.status)
	}
	if e.msg != "" {
		s += ": " + e.msg
	}
	if h := statusHint(e.status, e.pynchy); h != "" {
		s += " (" + h + ")"
	}
	return s
}

// As lets errors.As find the answer as the system-neutral
// *client.HTTPError: the server was reached and said no.
func (e *httpError) As(target any) bool {
	if t, ok := target.(**client.HTTPError); ok && e.status != 0 {
		*t = &client.HTTPError{Status: e.status, Message: e.msg, URL: e.url}
		return true
	}
	return false
}

// statusHint says what to check after an error answer. pynchy's own
// answers say what is wrong themselves (an unknown chat is a 404 too).
func statusHint(status int, pynchy bool) string {
	switch {
	case pynchy && status < 500:
		return ""
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "pynchy itself asks for no token: a proxy in front of it does; give it with --token"
	case status == http.StatusNotFound:
		return "is --url the base URL of a pynchy server, like http://localhost:8484?"
	case status >= 500:
		return "the server, or a proxy in front of it, failed: see its log, and try again"
	}
	return ""
}

// serverMessage reads what an error answer says: pynchy answers
// {"error": "…"}, aiohttp plain text.
func serverMessage(body []byte) (msg string, pynchy bool) {
	body = bytes.TrimSpace(body)
	if m := field(ingest.Repair(body), "error"); m != "" {
		body, pynchy = []byte(m), true
	}
	s := sanitize.Line(string(body))
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s, pynchy
}

// do sends a request and reads the whole answer (bounded).
func (l *Live) do(ctx context.Context, method, path string, q url.Values, body []byte) ([]byte, error) {
	u := l.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("pynchy: %s %s: %w", method, u, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if l.token != "" {
		req.Header.Set("Authorization", "Bearer "+l.token)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("pynchy server at %s does not answer (%s %s): %w; is it running?", l.base, method, path, stripURLError(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("pynchy: reading the answer to %s %s: %w", method, u, err)
	}
	if len(data) > maxResponse {
		return nil, fmt.Errorf("pynchy: the answer to %s %s is larger than %d MB", method, u, maxResponse>>20)
	}
	if resp.StatusCode/100 != 2 {
		msg, pynchy := serverMessage(data)
		return data, &httpError{method: method, url: u, status: resp.StatusCode, msg: msg, pynchy: pynchy}
	}
	return data, nil
}

// stripURLError drops the *url.Error wrapper, whose text repeats the URL.
func stripURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Probe answers nil when cfg.URL is a pynchy server: its /health names
// pynchy's fields (status, channels_connected) and /api/groups is a list.
func Probe(ctx context.Context, cfg client.Config) error {
	l, err := open(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	data, err := l.do(ctx, http.MethodGet, "/health", nil, nil)
	if err != nil {
		return fmt.Errorf("not a pynchy server: %w", err)
	}
	o := normalize.AsObjectShared(ingest.Repair(bytes.TrimSpace(data)))
	_, hasChannels := o["channels_connected"]
	if o == nil || normalize.Str(o["status"]) == "" || !hasChannels {
		return fmt.Errorf("not a pynchy server: GET %s/health does not answer as pynchy does (no status and channels_connected)", l.base)
	}
	data, err = l.do(ctx, http.MethodGet, "/api/groups", nil, nil)
	if err != nil {
		return fmt.Errorf("not a pynchy server: %w", err)
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '[' || !jsonx.Valid(ingest.Repair(t)) {
		return fmt.Errorf("not a pynchy server: GET %s/api/groups is not a list of chats", l.base)
	}
	return nil
}

// Sessions lists the chats in the server's order, working ones shown
// generating when a followed stream saw them so.
func (l *Live) Sessions(ctx context.Context) ([]events.Task, error) {
	data, err := l.do(ctx, http.MethodGet, "/api/groups", nil, nil)
	if err != nil {
		return nil, err
	}
	list := normalize.AsListShared(ingest.Repair(bytes.TrimSpace(data)))
	if list == nil && !bytes.Equal(bytes.TrimSpace(data), []byte("[]")) {
		return nil, fmt.Errorf("pynchy: GET %s/api/groups did not answer a list of chats", l.base)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	tasks := make([]events.Task, 0, len(list))
	for _, raw := range list {
		o := normalize.AsObjectShared(raw)
		jid := normalize.StrField(o, "jid")
		if jid == "" || sanitize.Line(jid) != jid {
			// Not an id perch can show or be given back on a command line.
			continue
		}
		t := events.Task{ID: jid, Name: sanitize.Line(normalize.StrField(o, "name")), Status: events.StatusIdle}
		if l.active[jid] {
			t.Status = events.StatusGenerating
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// Session finds a chat by its jid or an unambiguous prefix of it.
func (l *Live) Session(ctx context.Context, idOrPrefix string) (events.Task, error) {
	tasks, err := l.Sessions(ctx)
	if err != nil {
		return events.Task{}, err
	}
	found := client.Match(tasks, idOrPrefix)
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		ids := make([]string, len(found))
		for i, t := range found {
			ids[i] = t.ID
		}
		return events.Task{}, fmt.Errorf("%q names %d chats of the pynchy server at %s (%s); give more of the jid", idOrPrefix, len(found), l.base, strings.Join(ids, ", "))
	}
	ids := make([]string, 0, len(tasks))
	for _, t := range tasks {
		ids = append(ids, t.ID)
	}
	known := "it has no chats"
	if len(ids) > 0 {
		known = "its chats are " + strings.Join(ids, ", ")
	}
	return events.Task{}, fmt.Errorf("the pynchy server at %s has no chat %q; %s (perch tasks --backend pynchy lists them)", l.base, sanitize.Line(idOrPrefix), known)
}

// history reads a chat's whole history, oldest first.
func (l *Live) history(ctx context.Context, jid string) ([]json.RawMessage, error) {
	return l.lastRows(ctx, jid, historyLimit)
}

// lastRows reads the newest n rows of a chat's history, oldest first.
func (l *Live) lastRows(ctx context.Context, jid string, n int) ([]json.RawMessage, error) {
	data, err := l.do(ctx, http.MethodGet, "/api/messages", url.Values{"jid": {jid}, "limit": {fmt.Sprint(n)}}, nil)
	if err != nil {
		return nil, err
	}
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '[' {
		return nil, fmt.Errorf("pynchy: the history of chat %q (GET %s/api/messages) is not a list; is --url a pynchy server, and not a proxy's page?", jid, l.base)
	}
	var rows []json.RawMessage
	if err := json.Unmarshal(ingest.Repair(t), &rows); err != nil {
		return nil, fmt.Errorf("pynchy: the history of chat %q (GET %s/api/messages) does not decode: %w", jid, l.base, err)
	}
	return rows, nil
}

// Send posts a follow-up. pynchy pipes it into a working agent's run, so
// it is Queued when perch saw the chat's agent working.
func (l *Live) Send(ctx context.Context, sessionID string, m client.Message) (client.SendResult, error) {
	if strings.TrimSpace(m.Text) == "" {
		return client.SendResult{}, client.Permanent(errors.New("pynchy: an empty message is not sent (pynchy refuses it)"))
	}
	body, err := json.Marshal(map[string]string{"jid": sessionID, "content": m.Text})
	if err != nil {
		return client.SendResult{}, client.Permanent(err)
	}
	l.mu.Lock()
	queued := l.active[sessionID]
	l.mu.Unlock()
	_, err = l.do(ctx, http.MethodPost, "/api/send", nil, body)
	var he *httpError
	switch {
	case err == nil:
		return client.SendResult{Queued: queued}, nil
	case errors.As(err, &he) && he.status/100 == 4 && he.status != http.StatusRequestTimeout && he.status != http.StatusTooManyRequests:
		return client.SendResult{}, client.Permanent(fmt.Errorf("pynchy refused the message for chat %q: %w", sessionID, err))
	case ctx.Err() != nil:
		return client.SendResult{}, ctx.Err()
	}
	return client.SendResult{}, client.Retryable(err)
}

// Cancel is not possible: pynchy has no endpoint to stop a run.
func (l *Live) Cancel(context.Context, string) ([]events.QueuedMessage, error) {
	return nil, fmt.Errorf("pynchy cannot stop a run from outside (its API has no cancel endpoint; stop it in the chat's own channel): %w", client.ErrUnsupported)
}

// Create is not possible: pynchy's chats come from its channels.
func (l *Live) Create(context.Context, client.CreateRequest) (events.Task, error) {
	return events.Task{}, fmt.Errorf("pynchy cannot start a chat from perch (chats come from its channels): %w", client.ErrUnsupported)
}

func (l *Live) setActive(jid string, on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if on {
		l.active[jid] = true
	} else {
		delete(l.active, jid)
	}
}
