// Package client is the one interface perch's views (the TUI, export,
// tail, send, cancel, queue) use to talk to a live agent system. Each
// system that streams sessions over HTTP (maria, Suna/Kortix, pynchy) has
// one implementation beside its decoder (client/maria, client/suna,
// client/pynchy); nothing outside those packages knows which system it
// talks to beyond what Capabilities says.
//
// A backend hands out sessions already decoded into the normalized event
// model (package events), in order, so every consumer applies them to an
// events.Timeline the same way.
package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// Names of the live backends, as --backend and PERCH_BACKEND spell them.
const (
	Maria  = "maria"
	Suna   = "suna"
	Pynchy = "pynchy"
)

// ErrUnsupported is returned (wrapped, with a sentence for people) by an
// action the backend cannot do, such as Cancel on pynchy. Consumers check
// Capabilities first and never offer such an action; this is the answer
// when one is asked for anyway (a script calling `perch cancel`).
var ErrUnsupported = errors.New("not supported by this backend")

// ErrBusy is returned (wrapped) by Send when the session is running and
// the system has no queue of its own (Suna): the caller holds the message
// in perch's outbox and delivers it when the run ends.
var ErrBusy = errors.New("the session is running and the server has no queue")

// ErrNotRunning is reported (wrapped) by Cancel when the session has no
// run in progress. Test with errors.Is.
var ErrNotRunning = errors.New("no running task")

// ErrNoTask and ErrAmbiguousTask classify Session failures for errors.Is:
// no session matches the id or prefix, or several do. A backend wraps them
// (NoTaskError, or its own error naming the candidates).
var (
	ErrNoTask        = errors.New("no such task")
	ErrAmbiguousTask = errors.New("ambiguous task id")
)

// NoTaskError: no session id equals or starts with Query.
type NoTaskError struct{ Query string }

func (e *NoTaskError) Error() string {
	return fmt.Sprintf("no task matches %q", e.Query)
}

// Is makes errors.Is(err, ErrNoTask) hold.
func (e *NoTaskError) Is(target error) bool { return target == ErrNoTask }

// Config is what opening a live backend needs. Each system's package has
// Open(Config) (Backend, error) and Probe(ctx, Config) error (nil when the
// URL answers as that system does, cheaply and unambiguously).
type Config struct {
	// URL is the base URL as the user gave it (--url).
	URL string
	// Token is a bearer token ("" for none). It is sent to the server and
	// never printed, logged or put into an error.
	Token string
	// Client makes the requests; nil means a default one.
	Client *http.Client

	// Header, LookupHost and Discovered are how a caller (perch's command
	// line) says more about the connection than a URL and a token. Each
	// backend honours what applies to it and ignores the rest.

	// Header holds extra request headers (--header, e.g. for an
	// authenticating proxy), sent with every request to the server's host,
	// streams included. Their values are never printed. A backend that
	// builds its own HTTP client adds them itself; the others take
	// HTTPClient, which adds them.
	Header http.Header
	// LookupHost resolves host names for a backend that dials by itself
	// (maria tries every loopback address of localhost, because its daemon
	// listens on [::1] alone); nil means the system resolver.
	LookupHost func(ctx context.Context, host string) ([]string, error)
	// Discovered: the URL was found on this machine (registry.Discover),
	// not given by the user, so a backend may prefer how its own local
	// daemon listens (maria: [::1] first).
	Discovered bool
}

// Capabilities say what a backend can do; the views offer nothing else.
type Capabilities struct {
	// Create: new sessions can be started from perch.
	Create bool
	// Send: follow-ups can be sent.
	Send bool
	// Cancel: a running session can be stopped.
	Cancel bool
	// ServerQueue: the server queues follow-ups sent while the agent
	// runs and reports them (maria's queued messages). Without it a
	// follow-up to a running session is held by perch (ErrBusy) or piped
	// into the run by the server (PipesFollowUps).
	ServerQueue bool
	// PipesFollowUps: the server hands a follow-up to the running agent
	// itself (pynchy); perch shows it queued until the agent consumed it.
	PipesFollowUps bool
	// Cost: usage events may carry a cost in USD.
	Cost bool
	// WebSearch: a follow-up can ask the agent to search the web
	// (Message.WebSearch is honoured).
	WebSearch bool
	// Recording: the sessions are a transcript file (perch replay), not
	// a live system: they never change, Name is the file's kind and URL
	// its path.
	Recording bool
	// Home: the system is perch's own daemon (maria), the one a view
	// shows without naming it: its sessions are "tasks" and no status
	// bar names the system. A view names any other live system (Name)
	// and calls its sessions "sessions".
	Home bool
	// StreamStaysOpen: the server never ends a session's stream by
	// itself (maria): a clean close is news, said once, and followed by
	// reconnecting. Without it a server may end the stream after each
	// run (Suna), and a clean close is not reported.
	StreamStaysOpen bool
}

// ConnState is a stream connection's state as the views show it (the
// stream's own state, see package sse).
type ConnState = sse.ConnState

// Update is one step of a followed session. Updates arrive in order; a
// consumer applies Events to its timeline as they come.
type Update struct {
	// Reset: the backend could not continue the session without
	// duplicates or gaps, so it starts it over: drop the timeline built so
	// far (keep the task), then apply Events.
	Reset bool
	// Events, already decoded and deduplicated.
	Events []events.Event
	// State, when non-nil, is the connection's new state.
	State *ConnState
	// Synced: everything the server had when this update was sent is in
	// (the history and, for maria, the replay). It marks the point where
	// export may end (unless it waits for the run) and where the TUI's
	// first full paint is due. It may be set on several updates (after
	// each reconnect).
	Synced bool
}

// Message is a follow-up as the user wrote it.
type Message struct {
	Text      string
	WebSearch bool // maria only; other backends ignore it
}

// SendResult is what the server said of a follow-up.
type SendResult struct {
	// ID the server gave the message (maria's queued id, Suna's run id),
	// "" when it gives none.
	ID string
	// Queued: the message waits behind the running agent (in the
	// server's queue, or piped into the run).
	Queued bool
}

// CreateRequest starts a new session.
type CreateRequest struct {
	Name      string
	Model     string
	Cwd       string
	Prompt    string
	WebSearch bool
}

// Backend is a live agent system.
type Backend interface {
	// Name is the backend's name (Maria, Suna or Pynchy).
	Name() string
	// URL is the base URL it talks to, for messages to people. It never
	// contains a token.
	URL() string
	Capabilities() Capabilities
	// Sessions lists the sessions (maria tasks, Suna threads, pynchy
	// chats), most recently active first where the server says.
	Sessions(ctx context.Context) ([]events.Task, error)
	// Session returns one session by its id or an unambiguous prefix.
	Session(ctx context.Context, idOrPrefix string) (events.Task, error)
	// Follow delivers the session's history and then its live events to
	// on, in order, reconnecting by itself, until ctx ends (it then
	// returns ctx.Err()) or the server refuses for good. on is called
	// one call at a time, never concurrently, and never after Follow
	// returns; while it runs the stream waits (backpressure).
	Follow(ctx context.Context, sessionID string, on func(Update)) error
	// Send posts a follow-up. Its error says what became of the message
	// for perch's outbox: marked Retryable (certainly not delivered, a
	// later try may work) or Permanent (refused for good) when the
	// backend knows (see SendClass); ErrBusy when perch must hold it until
	// the run ends; anything else may have arrived, and the outbox asks
	// the session's replay before any resend.
	Send(ctx context.Context, sessionID string, m Message) (SendResult, error)
	// Cancel stops the session's run and returns the messages that were
	// still queued (ErrUnsupported without Capabilities.Cancel).
	Cancel(ctx context.Context, sessionID string) ([]events.QueuedMessage, error)
	// Create starts a session (ErrUnsupported without Capabilities.Create).
	Create(ctx context.Context, r CreateRequest) (events.Task, error)
}

// SettledFollower is implemented by backends that can follow a session
// for a reader who needs it only once its run is over (perch export
// --until-idle). FollowSettled sends what Follow sends except the running
// run's live events: the backend reads the run again whole when it ends
// (Suna's history, a Reset), so decoding its stream frame by frame would
// be thrown away. The stream is still read, for the run's end. A backend
// may also leave out what it would send before a run it joins running
// (Suna's first history read), since the read at the run's end replaces
// it: the first update is then that read.
type SettledFollower interface {
	FollowSettled(ctx context.Context, sessionID string, on func(Update)) error
}

// SessionCapabler is implemented by backends whose sessions differ in
// what they can do (a local CLI's session whose process has no messaging
// socket takes no follow-ups). SessionCapabilities narrows Capabilities
// for one session and says why, for people, when Send is off. It reads
// little (a few small local files): a view may call it as it opens the
// session.
type SessionCapabler interface {
	SessionCapabilities(ctx context.Context, sessionID string) (Capabilities, string)
}

// SessionWatcher is implemented by backends that can tell when the list
// of sessions changes (maria's daemon stream, pynchy's global stream);
// the others are polled by the task list.
type SessionWatcher interface {
	// WatchSessions calls on with the whole list each time it changes,
	// until ctx ends.
	WatchSessions(ctx context.Context, on func([]events.Task)) error
}

// Match finds idOrPrefix among sessions: the one whose id it is, alone,
// else every session whose id starts with it (none for "").
func Match(sessions []events.Task, idOrPrefix string) []events.Task {
	var found []events.Task
	for _, t := range sessions {
		if t.ID == idOrPrefix {
			return []events.Task{t}
		}
		if idOrPrefix != "" && strings.HasPrefix(t.ID, idOrPrefix) {
			found = append(found, t)
		}
	}
	return found
}
