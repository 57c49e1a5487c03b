// Package pynchy is a fake pynchy server for tests and demos: the HTTP API
// that pynchy's own terminal client uses (GET /api/groups, GET
// /api/messages, POST /api/send, the one global SSE stream GET /api/events,
// GET /health, GET /status), with scripted agents per chat.
//
// It is faithful to the shapes perch reads (docs/live/pynchy.md): frames are
// `data:` lines only, with no ids, no event names, no heartbeat and no
// replay; JSON is written as Python's json.dumps writes it (non-ASCII
// escaped, NaN bare); the history returns the trace rows the agent stored,
// with their data JSON-encoded in content, and never the text traces,
// user_input traces or activity. A message sent while a chat's agent works
// is piped into the run, which later shows it consumed with a user_input
// trace.
//
// Fault knobs: Options.DropEvery cuts every event stream after so many
// frames; Serve can be called again on the same address after its context
// ended (a restart: chats, history and running agents are kept, frames sent
// while no one listened are lost, as with the real server); Hold and
// Release pause every agent between two steps.
package pynchy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Chat is a chat (a pynchy group) that exists from the start.
type Chat struct {
	JID  string
	Name string
}

// Options configure a fake server. The zero value serves one chat,
// "tui:main", whose agent is called "pynchy".
type Options struct {
	// Agent is the agent's sender name.
	Agent string
	// Chats exist from the start (default: one, tui:main).
	Chats []Chat
	// StepDelay is the pause between two steps of an agent's run (default
	// 20 ms; negative: none).
	StepDelay time.Duration
	// DropEvery, when > 0, ends every event stream after that many frames,
	// as a proxy that cuts long connections would.
	DropEvery int
	// Now is the clock of timestamps (default time.Now).
	Now func() time.Time
}

// Server is the fake pynchy. It is safe for concurrent use.
type Server struct {
	opts  Options
	start time.Time

	ctx    context.Context // ends the agents on Close
	cancel context.CancelFunc
	runs   sync.WaitGroup

	mu     sync.Mutex
	chats  map[string]*chat
	order  []string
	subs   map[*subscriber]struct{}
	lastTS time.Time
	gate   chan struct{}  // closed while agents may go on
	holdAt map[string]int // chat → rows after which agents are held (HoldAtRows)
	tools  int            // tool_use ids handed out
}

type chat struct {
	jid, name string
	rows      []row
	active    bool
	waiting   []string // messages sent while the agent works, not yet consumed
	sends     int      // messages sent to the chat (POST /api/send and Say)
}

// row is a stored message as /api/messages returns it.
type row struct {
	sender, content, ts string
	fromMe              bool
}

type subscriber struct {
	ch   chan []byte
	gone chan struct{} // closed when the server dropped it (too slow)
}

// subscriberBuffer bounds the frames waiting for one slow reader; a reader
// that falls that far behind is dropped (its client reconnects).
const subscriberBuffer = 8192

// New returns a fake pynchy. Close it to stop its agents.
func New(opts Options) *Server {
	if opts.Agent == "" {
		opts.Agent = "pynchy"
	}
	if len(opts.Chats) == 0 {
		opts.Chats = []Chat{{JID: "tui:main", Name: "Main"}}
	}
	if opts.StepDelay == 0 {
		opts.StepDelay = 20 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{opts: opts, start: opts.Now(), ctx: ctx, cancel: cancel,
		chats: map[string]*chat{}, subs: map[*subscriber]struct{}{}, gate: make(chan struct{})}
	close(s.gate)
	for _, c := range opts.Chats {
		s.addChat(c)
	}
	return s
}

func (s *Server) addChat(c Chat) {
	if _, ok := s.chats[c.JID]; ok {
		return
	}
	s.chats[c.JID] = &chat{jid: c.JID, name: c.Name}
	s.order = append(s.order, c.JID)
}

// Close stops the agents and waits for them.
func (s *Server) Close() error {
	s.cancel()
	s.Release()
	s.runs.Wait()
	return nil
}

// Hold pauses every agent before its next step, until Release.
func (s *Server) Hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdLocked()
}

// HoldAtRows holds every agent (as Hold) before the first step that finds
// the chat with n history rows or more: a test can stop a run at a known
// point, whatever the machine's speed.
func (s *Server) HoldAtRows(jid string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holdAt == nil {
		s.holdAt = map[string]int{}
	}
	s.holdAt[jid] = n
}

func (s *Server) holdLocked() {
	select {
	case <-s.gate:
		s.gate = make(chan struct{})
	default:
	}
}

// Held reports whether agents are held (by Hold, or by HoldAtRows once
// it took effect): a test that releases them must first see that they
// are, or a hold that takes effect after its Release stops them for good.
func (s *Server) Held() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.gate:
		return false
	default:
		return true
	}
}

// Release lets held agents go on.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.gate:
	default:
		close(s.gate)
	}
}

// Rows is the number of history rows of a chat.
func (s *Server) Rows(jid string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.chats[jid]; c != nil {
		return len(c.rows)
	}
	return 0
}

// Active reports whether a chat's agent is working.
func (s *Server) Active(jid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[jid]
	return c != nil && c.active
}

// Sends is the number of messages the chat received.
func (s *Server) Sends(jid string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.chats[jid]; c != nil {
		return c.sends
	}
	return 0
}

// Say sends a message to a chat as POST /api/send does.
func (s *Server) Say(jid, content string) error {
	return s.send(jid, content)
}

// Clear clears a chat as pynchy's /clear does: its history starts afresh
// (pynchy hides the earlier rows from /api/messages) and the stream says
// chat_cleared.
func (s *Server) Clear(jid string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[jid]
	if c == nil {
		return fmt.Errorf("%w %q", errUnknownChat, jid)
	}
	c.rows = nil
	s.publish(obj{{"type", "chat_cleared"}, {"chat_jid", jid}})
	return nil
}

// Serve answers on ln until ctx ends, then closes every connection at
// once, as a server that dies would. It may be called again (on a new
// listener for the same address) to restart.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
		}
		_ = srv.Close()
	}()
	err := srv.Serve(ln)
	close(done)
	if errors.Is(err, http.ErrServerClosed) {
		return ctx.Err()
	}
	return err
}

// Handler is the HTTP API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /status", s.status)
	mux.HandleFunc("GET /api/groups", s.groups)
	mux.HandleFunc("GET /api/messages", s.messages)
	mux.HandleFunc("POST /api/send", s.sendHandler)
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("GET /api/periodic", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, []any{}) })
	return mux
}

// writeJSON answers as aiohttp's json_response does.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(dumps(v))
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, obj{{"status", "ok"}, {"uptime_seconds", int(s.opts.Now().Sub(s.start).Seconds())},
		{"head_sha", "0000000fake"}, {"head_commit", "fake pynchy (perch)"}, {"dirty", false}, {"channels_connected", true}})
}

func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	active := []any{}
	for _, j := range s.order {
		if s.chats[j].active {
			active = append(active, j)
		}
	}
	n := len(s.order)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, obj{{"status", "ok"}, {"uptime_seconds", int(s.opts.Now().Sub(s.start).Seconds())},
		{"groups", n}, {"active_chats", active}})
}

func (s *Server) groups(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	out := make([]any, 0, len(s.order))
	for _, j := range s.order {
		c := s.chats[j]
		folder := strings.NewReplacer(":", "-", "/", "-").Replace(c.jid)
		out = append(out, obj{{"jid", c.jid}, {"name", c.name}, {"folder", folder}, {"trigger", "@" + s.opts.Agent}})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	jid := r.URL.Query().Get("jid")
	if jid == "" {
		writeJSON(w, http.StatusBadRequest, obj{{"error", "jid parameter required"}})
		return
	}
	limit := 50
	if l := r.URL.Query().Get("limit"); l != "" {
		if _, err := fmt.Sscanf(l, "%d", &limit); err != nil {
			// aiohttp would answer a ValueError with a bare 500.
			http.Error(w, "500 Internal Server Error\n\nServer got itself in trouble", http.StatusInternalServerError)
			return
		}
	}
	s.mu.Lock()
	var rows []row
	if c := s.chats[jid]; c != nil {
		rows = append(rows, c.rows...)
	}
	s.mu.Unlock()
	// The newest limit rows, oldest first, by their timestamp strings.
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].ts < rows[b].ts })
	if limit >= 0 && len(rows) > limit {
		rows = rows[len(rows)-limit:]
	}
	out := make([]any, 0, len(rows))
	for _, rw := range rows {
		out = append(out, obj{{"sender_name", rw.sender}, {"content", rw.content}, {"timestamp", rw.ts}, {"is_from_me", rw.fromMe}})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) sendHandler(w http.ResponseWriter, r *http.Request) {
	var body struct {
		JID     string `json:"jid"`
		Content string `json:"content"`
	}
	if err := decodeBody(r, &body); err != nil {
		http.Error(w, "400: Bad Request", http.StatusBadRequest)
		return
	}
	if body.JID == "" || body.Content == "" {
		writeJSON(w, http.StatusBadRequest, obj{{"error", "jid and content required"}})
		return
	}
	if err := s.send(body.JID, body.Content); err != nil {
		writeJSON(w, http.StatusNotFound, obj{{"error", err.Error()}})
		return
	}
	writeJSON(w, http.StatusOK, obj{{"status", "ok"}})
}

// events is the global stream: every event of every chat, as it happens.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	sub := &subscriber{ch: make(chan []byte, subscriberBuffer), gone: make(chan struct{})}
	s.mu.Lock()
	s.subs[sub] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, sub)
		s.mu.Unlock()
	}()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	sent := 0
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-sub.gone:
			return
		case data := <-sub.ch:
			if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
				return
			}
			fl.Flush()
			sent++
			if s.opts.DropEvery > 0 && sent >= s.opts.DropEvery {
				return
			}
		}
	}
}

// now is the next timestamp: Python's isoformat in UTC, strictly later
// than the last one handed out, so history order is emission order.
func (s *Server) now() string {
	t := s.opts.Now().UTC().Truncate(time.Microsecond)
	if !t.After(s.lastTS) {
		t = s.lastTS.Add(time.Microsecond)
	}
	s.lastTS = t
	return t.Format("2006-01-02T15:04:05.000000+00:00")
}

// publish sends an event to every listener. The caller holds s.mu, so
// events leave in the order they were stored.
func (s *Server) publish(ev obj) {
	data := dumps(ev)
	for sub := range s.subs {
		select {
		case sub.ch <- data:
		default:
			delete(s.subs, sub)
			close(sub.gone)
		}
	}
}

// store adds a history row and publishes what the stream shows of it. The
// caller holds s.mu.
func (s *Server) storeMessage(c *chat, sender, content, ts string, fromMe bool) {
	c.rows = append(c.rows, row{sender: sender, content: content, ts: ts, fromMe: fromMe})
	s.publish(obj{{"type", "message"}, {"chat_jid", c.jid}, {"sender_name", sender}, {"content", content},
		{"timestamp", ts}, {"is_bot", fromMe}})
}

// trace publishes an agent trace, its data spread into the event; stored
// traces also become a history row whose content is the data, encoded.
// The caller holds s.mu.
func (s *Server) trace(c *chat, typ string, data obj, stored bool, ts string) {
	if stored {
		if ts == "" {
			ts = s.now()
		}
		c.rows = append(c.rows, row{sender: typ, content: string(dumps(data)), ts: ts, fromMe: true})
	}
	ev := obj{{"type", "agent_trace"}, {"chat_jid", c.jid}, {"trace_type", typ}}
	s.publish(append(ev, data...))
}

func (s *Server) activity(c *chat, active bool) {
	c.active = active
	s.publish(obj{{"type", "agent_activity"}, {"chat_jid", c.jid}, {"active", active}})
}

var errUnknownChat = errors.New("unknown jid")

// send stores the message and publishes it; an idle agent starts a run, a
// working one gets the message piped in.
func (s *Server) send(jid, content string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[jid]
	if c == nil {
		return fmt.Errorf("%w %q", errUnknownChat, jid)
	}
	c.sends++
	s.storeMessage(c, "You", content, s.now(), false)
	if c.active {
		c.waiting = append(c.waiting, content)
		return nil
	}
	if s.ctx.Err() != nil {
		return nil
	}
	c.active = true // before the run's goroutine: a second send is piped
	s.runs.Add(1)
	go s.run(c, content)
	return nil
}
