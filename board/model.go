// Package board is the state of every session of every source perch
// watches: each source's connection, each session's status, why it needs
// the user (a reply not seen, a failed run, a held message that cannot
// go), what is unread, queued and held. It is what `perch watch`, `perch
// tasks --all` and the TUI's board read.
//
// Model is the pure part (no IO, no clock: callers pass the time); Live
// keeps a Model up to date from each source's cheap signal
// (backend.WatchSessions) and the outbox journals; Seen keeps what the
// user has seen under the state directory. Nothing here knows which
// system a source is: the system's name is text for people.
package board

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
)

// Status is a session's state as the board shows it.
type Status string

const (
	Generating   Status = "generating"
	Idle         Status = "idle"
	Failed       Status = "failed"    // the last run failed
	Cancelled    Status = "cancelled" // the last run was cancelled
	Stopped      Status = "stopped"   // the session's agent is not running (maria)
	Disconnected Status = "disconnected"
	// Waiting: the run waits for the user (a local CLI's permission
	// prompt or question): it needs you, for the reason Session.WaitingFor
	// gives.
	Waiting Status = "waiting"
	// Exited: the session's process is gone (a local CLI that exited or
	// was killed).
	Exited Status = "exited"
	// Gone is a Change's New status for a session the source no longer
	// lists.
	Gone Status = "gone"
)

// Reason is why a session needs the user ("" when it does not).
type Reason string

const (
	None Reason = ""
	// Undeliverable: a held message could not be delivered (refused for
	// good, or its session is gone).
	Undeliverable Reason = "undeliverable"
	// RunFailed: the last run failed and the user has not looked since.
	RunFailed Reason = "failed"
	// Reply: a run ended with a reply the user has not seen.
	Reply Reason = "reply"
	// Paused: messages wait in a queue whose delivery is paused.
	Paused Reason = "paused"
	// Permission: the agent waits for the user to allow a tool call.
	Permission Reason = "permission"
	// Input: the agent waits for the user's answer.
	Input Reason = "input"
)

// Text is the reason for people.
func (r Reason) Text() string {
	switch r {
	case Undeliverable:
		return "a held message could not be delivered"
	case RunFailed:
		return "the run failed"
	case Reply:
		return "a reply you have not seen"
	case Paused:
		return "messages wait in a paused queue"
	case Permission:
		return "it asks your permission"
	case Input:
		return "it waits for your answer"
	}
	return ""
}

// rank orders reasons: the lower, the more urgent.
func (r Reason) rank() int {
	switch r {
	case Permission, Input:
		return -1 // the agent is stopped until the user answers
	case Undeliverable:
		return 0
	case RunFailed:
		return 1
	case Reply:
		return 2
	case Paused:
		return 3
	}
	return 4
}

// Bounds of the untrusted text a row carries.
const (
	MaxName  = 120 // runes of a session's name
	MaxReply = 200 // runes of the first line of the last reply
	MaxError = 300 // runes of a source's error
)

// Session is what a source says of one session through its cheap signal.
type Session struct {
	ID     string
	Name   string
	Status Status // generating, idle, failed, cancelled or stopped
	// Updated is the session's last activity as the source reports it;
	// it marks what the user has seen (Seen).
	Updated time.Time
	Queued  int // messages in the server's own queue
	// Tokens and Cost of the last run where the system reports them
	// (HasCost).
	Tokens  int64
	Cost    float64
	HasCost bool
	// SessionTokens and SessionCost are the whole session's, where the
	// system lists them (a local CLI's, counted off its whole file);
	// SessionCost is unknown unless HasSessionCost.
	SessionTokens  int64
	SessionCost    float64
	HasSessionCost bool
	LastReply      string // the last reply's text (the board keeps its first line)
	// WaitingFor: what a Waiting session waits for, in the system's words
	// ("permission prompt", "input needed").
	WaitingFor string
}

// FromTask is a Session of a task as every backend lists it.
func FromTask(t events.Task) Session {
	st := Status(t.Status)
	switch st {
	case Generating, Idle, Stopped, Failed, Cancelled, Waiting, Exited:
	default:
		st = Idle
	}
	return Session{ID: t.ID, Name: t.Name, Status: st, Updated: t.Updated, Queued: len(t.QueuedMessages), WaitingFor: t.WaitingFor,
		SessionTokens: t.Tokens, SessionCost: t.Cost, HasSessionCost: t.HasCost}
}

// Held is what perch's outbox holds for a session.
type Held struct {
	Held          int    // held or being sent
	Undeliverable int    // refused for good, or orphaned
	Paused        bool   // auto-delivery is paused
	Err           string // why the last undeliverable message failed
}

// Conn is a source's connection state.
type Conn string

const (
	Connecting  Conn = "connecting"
	Live        Conn = "live"
	Retrying    Conn = "retrying"
	Refused     Conn = "refused token"
	WrongSystem Conn = "answers as another system"
	Down        Conn = "down"
)

// SourceState is one source's row.
type SourceState struct {
	Name   string // as the user named it (the config file), else its URL
	System string // "" until known
	URL    string // never with a token
	Conn   Conn
	// RetryIn: the next attempt is due this long after Since.
	RetryIn time.Duration
	Err     string // sanitized, bounded: why it is not live
	Since   time.Time
	// Listed: a list of its sessions has arrived (since the board began).
	Listed bool
}

// Settled: the source is either listed or has said why it is not (a
// command that prints the board once waits for every source to settle).
func (s SourceState) Settled() bool {
	return s.Listed && s.Conn == Live || s.Conn != Live && s.Conn != Connecting
}

// Line is the state in words for the source's row, e.g. "retrying in 3s
// (connection refused)".
func (s SourceState) Line(now time.Time) string {
	var b strings.Builder
	b.WriteString(string(s.Conn))
	if s.RetryIn > 0 && s.Conn != Live && s.Conn != Connecting {
		left := s.RetryIn - now.Sub(s.Since)
		if left < 0 {
			left = 0
		}
		word := " retrying"
		if s.Conn == Retrying {
			word = ""
		}
		b.WriteString(word + " in " + (left + time.Second - 1).Truncate(time.Second).String())
	}
	if s.Err != "" {
		b.WriteString(" (" + s.Err + ")")
	}
	return b.String()
}

// Row is one session on the board.
type Row struct {
	Source  string
	System  string
	ID      string
	Name    string // sanitized, one line, bounded
	Status  Status // Disconnected while its source is not live
	Reason  Reason
	Unread  int // runs ended since the user last looked
	Queued  int
	Held    int
	Updated time.Time
	// Tokens and Cost are the last run's (HasCost: its cost is known).
	Tokens  int64
	Cost    float64
	HasCost bool
	// SessionTokens and SessionCost are the whole session's, where the
	// system lists them (HasSessionCost: its cost is known).
	SessionTokens  int64
	SessionCost    float64
	HasSessionCost bool
	LastReply      string // first line, sanitized, bounded
	Detail         string // more on Reason (why a message was refused, why the run failed), sanitized
	// Note says what the board could not learn of the session (why its
	// last run's summary could not be read), sanitized.
	Note string
	// Settling: how a run that ended before the board saw the session
	// ended is being read; the row's status and reason may still change,
	// and that is no news (a notifier waits for it).
	Settling bool
	// Pending: a run just ended and how it ended is being read; the news
	// is due once it is in (one notification, failed or a reply, not
	// both).
	Pending bool
}

// Change is one session's change of state, for `perch watch`.
type Change struct {
	Source  string
	System  string
	Session string
	Name    string
	Old     Status // "" for a session that appeared
	New     Status
	Reason  Reason
	// Detail says more on the new state: why the run failed or was
	// cancelled, why a held message was refused (sanitized).
	Detail string
	At     time.Time
}

// Filter selects rows; its zero value selects all.
type Filter struct {
	Status Status // only this status ("" for any)
	Source string // only this source ("" for any)
	Text   string // the name or id contains it, ignoring case
	// NeedsYou: only sessions that need the user.
	NeedsYou bool
}

// Model is the board's state. It is not safe for concurrent use (Live
// guards it).
type Model struct {
	sources []*source
	seen    Marks
	// baseline collects the marks of sessions seen for the first time,
	// for the caller to persist (TakeBaseline).
	baseline Marks
	// SummarizeAll: every session found, not only one that ran since it
	// was seen, has its last run read (Options.SummarizeAll).
	SummarizeAll bool
}

type source struct {
	state  SourceState
	synced bool // a first list arrived: later lists make changes
	items  map[string]*entry
	held   map[string]Held
	// summarized: the source can tell how a run ended (SetSummarized); a
	// run's end is then reported once its summary is in.
	summarized bool
	ended      []string // sessions whose run ended, not yet taken (TakeEnded)
}

type entry struct {
	s      Session
	unread int
	// shown is the state last reported as a change (status, reason), so
	// that a list repeated after a reconnect reports nothing again.
	shown  Status
	reason Reason
	// pending: the run ended and its summary is awaited; the change is
	// reported when it comes (SetSummary), so that a failed run is one
	// change, generating → failed.
	pending bool
	// before: the summary awaited is of a run that ended before the board
	// saw the session; it sets the session's state, it is not a change.
	before bool
	// end is how the last run ended when it did not finish (Failed,
	// Cancelled; "" otherwise): the list says only idle.
	end    Status
	detail string // why, as the system said
	note   string // why the summary could not be read
	sum    *summary
}

// summary is what the last run's summary said beyond its end.
type summary struct {
	tokens    int64
	cost      float64
	hasCost   bool
	hasTokens bool
	lastReply string
}

// NewModel starts a board of the named sources, in the order given.
func NewModel(sources []SourceState) *Model {
	m := &Model{seen: Marks{}, baseline: Marks{}}
	for _, s := range sources {
		if s.Conn == "" {
			s.Conn = Connecting
		}
		m.sources = append(m.sources, &source{state: s, items: map[string]*entry{}, held: map[string]Held{}})
	}
	return m
}

func (m *Model) source(name string) *source {
	for _, s := range m.sources {
		if s.state.Name == name {
			return s
		}
	}
	return nil
}

// SetConn records a source's connection state (Name picks the source).
func (m *Model) SetConn(st SourceState) {
	s := m.source(st.Name)
	if s == nil {
		return
	}
	st.Err = clip(sanitize.Line(st.Err), MaxError)
	if st.URL == "" {
		st.URL = s.state.URL
	}
	if st.System == "" {
		st.System = s.state.System
	}
	s.state = st
}

// SetSessions replaces a source's sessions with what it listed now and
// returns the changes of state, each session's once: a list repeated after
// a reconnect changes nothing, and the first list is the starting point,
// not a change.
func (m *Model) SetSessions(src string, list []Session, now time.Time) []Change {
	s := m.source(src)
	if s == nil {
		return nil
	}
	seen := make(map[string]bool, len(list))
	for _, n := range list {
		if n.ID == "" || seen[n.ID] {
			continue
		}
		seen[n.ID] = true
		n.Name = clip(sanitize.Line(n.Name), MaxName)
		n.LastReply = firstLine(n.LastReply)
		e := s.items[n.ID]
		if n.Updated.IsZero() && e != nil {
			// A system that reports no activity time (pynchy): the
			// board's own clock dates what it saw change.
			n.Updated = e.s.Updated
			if n.Status != e.s.Status {
				n.Updated = now
			}
		}
		key := Key(s.state.URL, n.ID)
		if e == nil {
			e = &entry{s: n}
			s.items[n.ID] = e
			mark, ok := m.seen[key]
			switch {
			case !ok:
				// Never seen before: what it holds now is the starting
				// point, not news.
				m.baseline[key] = n.Updated
				m.seen[key] = n.Updated
			case n.Updated.After(mark) && n.Status != Generating:
				e.unread = 1 // it ran while nobody looked
				if s.summarized {
					// How that run ended (failed? its reply?): one
					// bounded read, for the sessions that ran since
					// they were last seen only.
					e.before = true
					s.ended = append(s.ended, n.ID)
				}
			}
			if m.SummarizeAll && s.summarized && !e.before && n.Status != Generating {
				e.before = true
				s.ended = append(s.ended, n.ID)
			}
			if !s.synced {
				e.shown, e.reason = n.Status, m.reasonOf(s, e)
				continue
			}
		} else {
			if runEnded(e.s.Status, n.Status) {
				// A run ended while the board watched: news, even when
				// the source did not move its activity time (maria's
				// task list does not for every run).
				if !n.Updated.After(m.seen[key]) {
					n.Updated = now
				}
				e.unread++
				e.end, e.detail = "", ""
				if s.summarized {
					e.pending = true
					s.ended = append(s.ended, n.ID)
				}
			}
			switch {
			case n.Status == Generating:
				e.end, e.detail = "", ""
			case n.Status == Idle && e.end != "":
				n.Status = e.end // the list cannot say the run failed
			}
			e.s = n
		}
	}
	var changes []Change
	if s.synced {
		for id, e := range s.items {
			if !seen[id] {
				changes = append(changes, Change{Source: src, System: s.state.System, Session: id, Name: e.s.Name,
					Old: e.shown, New: Gone, At: now})
				delete(s.items, id)
			}
		}
	}
	s.synced = true
	return append(changes, m.diff(s, now)...)
}

// SetHeld replaces what the outbox holds for a source's sessions.
func (m *Model) SetHeld(src string, held map[string]Held, now time.Time) []Change {
	s := m.source(src)
	if s == nil {
		return nil
	}
	for id, h := range held {
		h.Err = clip(sanitize.Line(h.Err), MaxError)
		held[id] = h
	}
	s.held = held
	return m.diff(s, now)
}

// SetSeen replaces the marks of what the user has seen (read again from
// Seen) and returns the changes of reason that follow.
func (m *Model) SetSeen(marks Marks, now time.Time) []Change {
	for k, t := range marks {
		if t.After(m.seen[k]) {
			m.seen[k] = t
		}
	}
	var out []Change
	for _, s := range m.sources {
		for id, e := range s.items {
			if mark, ok := m.seen[Key(s.state.URL, id)]; ok && !e.s.Updated.After(mark) {
				e.unread = 0
			}
		}
		out = append(out, m.diff(s, now)...)
	}
	return out
}

// MarkSeen records that the user looked at a session now: its unread
// count drops to 0. It returns the mark to persist (Seen.Save).
func (m *Model) MarkSeen(src, id string) (key string, mark time.Time, ok bool) {
	s := m.source(src)
	if s == nil {
		return "", time.Time{}, false
	}
	e := s.items[id]
	if e == nil {
		return "", time.Time{}, false
	}
	key = Key(s.state.URL, id)
	if e.s.Updated.After(m.seen[key]) {
		m.seen[key] = e.s.Updated
	}
	e.unread = 0
	return key, m.seen[key], true
}

// SetSummarized says that the source can tell how a run ended (its
// backend is a backend.RunSummarizer): from now on a run's end is
// reported by SetSummary, once the caller has read it (TakeEnded).
func (m *Model) SetSummarized(src string) {
	if s := m.source(src); s != nil {
		s.summarized = true
	}
}

// TakeEnded returns the sessions of src whose run ended since the last
// call: the caller reads each one's summary once and hands it to
// SetSummary (or SummaryFailed).
func (m *Model) TakeEnded(src string) []string {
	s := m.source(src)
	if s == nil || len(s.ended) == 0 {
		return nil
	}
	out := s.ended
	s.ended = nil
	return out
}

// entry is the session id of source src (nil, nil if either is unknown).
func (m *Model) entry(src, id string) (*source, *entry) {
	s := m.source(src)
	if s == nil {
		return nil, nil
	}
	return s, s.items[id]
}

// SetSummary records how a session's last run ended, its last reply and
// its usage, and reports the change its end made (once: generating →
// failed, not → idle → failed).
func (m *Model) SetSummary(src, id string, rs events.RunSummary, now time.Time) []Change {
	s, e := m.entry(src, id)
	if e == nil {
		return nil
	}
	e.pending, e.note = false, ""
	e.sum = &summary{lastReply: firstLine(rs.LastReply)}
	if rs.HasUsage {
		e.sum.tokens, e.sum.hasTokens = rs.Tokens(), true
		e.sum.cost, e.sum.hasCost = rs.Usage.CostUSD, rs.Usage.HasCost
	}
	var end Status
	switch rs.End {
	case events.RunEndFailed:
		end = Failed
	case events.RunEndCancelled:
		end = Cancelled
	}
	if e.s.Status != Generating && end != "" {
		e.end, e.detail = end, clip(sanitize.Line(rs.Reason), MaxError)
		if e.s.Status == Idle {
			e.s.Status = end
		}
	}
	if e.before {
		// The state the board found, not a change it saw.
		e.before = false
		e.shown, e.reason = e.s.Status, m.reasonOf(s, e)
	}
	return m.diff(s, now)
}

// SummaryFailed records that a session's last run could not be
// summarized: its end is reported as the list said, the error becomes the
// row's note.
func (m *Model) SummaryFailed(src, id string, err error, now time.Time) []Change {
	s, e := m.entry(src, id)
	if e == nil {
		return nil
	}
	e.pending, e.before = false, false
	e.note = clip(sanitize.Line("how the last run ended is not known: "+err.Error()), MaxError)
	return m.diff(s, now)
}

// TakeBaseline returns the marks of sessions seen for the first time
// since the last call, for the caller to persist.
func (m *Model) TakeBaseline() Marks {
	if len(m.baseline) == 0 {
		return nil
	}
	b := m.baseline
	m.baseline = Marks{}
	return b
}

// diff reports the sessions of s whose (status, reason) differs from what
// was last reported.
func (m *Model) diff(s *source, now time.Time) []Change {
	if !s.synced {
		return nil
	}
	ids := make([]string, 0, len(s.items))
	for id := range s.items {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []Change
	for _, id := range ids {
		e := s.items[id]
		r := m.reasonOf(s, e)
		if e.pending || e.shown == e.s.Status && e.reason == r {
			continue
		}
		out = append(out, Change{Source: s.state.Name, System: s.state.System, Session: id, Name: e.s.Name,
			Old: e.shown, New: e.s.Status, Reason: r, Detail: detailOf(s, e, r), At: now})
		e.shown, e.reason = e.s.Status, r
	}
	return out
}

// runEnded: a run was going and is over (a run waiting for the user is
// not over).
func runEnded(old, cur Status) bool {
	running := func(s Status) bool { return s == Generating || s == Waiting }
	return running(old) && !running(cur)
}

// reasonOf is why a session needs the user, the most urgent reason first.
func (m *Model) reasonOf(s *source, e *entry) Reason {
	h := s.held[e.s.ID]
	switch {
	case e.s.Status == Waiting && e.s.WaitingFor == "permission prompt":
		return Permission
	case e.s.Status == Waiting:
		return Input
	case h.Undeliverable > 0:
		return Undeliverable
	case e.unread > 0 && e.s.Status == Failed:
		return RunFailed
	case e.unread > 0 && e.s.Status != Generating:
		return Reply
	case h.Paused && h.Held > 0:
		return Paused
	}
	return None
}

// Sources returns each source's state, in the order given.
func (m *Model) Sources() []SourceState {
	out := make([]SourceState, len(m.sources))
	for i, s := range m.sources {
		out[i] = s.state
		out[i].Listed = s.synced
	}
	return out
}

// Rows returns the sessions f selects, those that need the user first
// (the most urgent reason, then the latest activity), then the running
// ones, then the rest by latest activity.
func (m *Model) Rows(f Filter) []Row {
	var out []Row
	text := strings.ToLower(f.Text)
	for _, s := range m.sources {
		if f.Source != "" && s.state.Name != f.Source {
			continue
		}
		for _, e := range s.items {
			r := m.row(s, e)
			switch {
			case f.Status != "" && r.Status != f.Status,
				f.NeedsYou && r.Reason == None,
				text != "" && !strings.Contains(strings.ToLower(r.Name), text) && !strings.Contains(strings.ToLower(r.ID), text):
				continue
			}
			out = append(out, r)
		}
	}
	order := func(r Row) int {
		switch {
		case r.Reason != None:
			return r.Reason.rank()
		case r.Status == Generating:
			return 10
		}
		return 11
	}
	srcIndex := map[string]int{}
	for i, s := range m.sources {
		srcIndex[s.state.Name] = i
	}
	slices.SortStableFunc(out, func(a, b Row) int {
		if oa, ob := order(a), order(b); oa != ob {
			return oa - ob
		}
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		if c := srcIndex[a.Source] - srcIndex[b.Source]; c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// NeedsYou counts the sessions that need the user (a window title's
// count).
func (m *Model) NeedsYou() int {
	n := 0
	for _, s := range m.sources {
		for _, e := range s.items {
			if m.reasonOf(s, e) != None {
				n++
			}
		}
	}
	return n
}

func (m *Model) row(s *source, e *entry) Row {
	h := s.held[e.s.ID]
	st := e.s.Status
	if s.state.Conn != Live {
		st = Disconnected
	}
	r := Row{Source: s.state.Name, System: s.state.System, ID: e.s.ID, Name: e.s.Name, Status: st,
		Reason: m.reasonOf(s, e), Unread: e.unread, Queued: e.s.Queued, Held: h.Held + h.Undeliverable,
		Updated: e.s.Updated, Tokens: e.s.Tokens, Cost: e.s.Cost, HasCost: e.s.HasCost, LastReply: e.s.LastReply,
		SessionTokens: e.s.SessionTokens, SessionCost: e.s.SessionCost, HasSessionCost: e.s.HasSessionCost}
	r.Detail = detailOf(s, e, r.Reason)
	if sum := e.sum; sum != nil {
		if sum.hasTokens {
			r.Tokens = sum.tokens
		}
		if sum.hasCost {
			r.Cost, r.HasCost = sum.cost, true
		}
		if sum.lastReply != "" {
			r.LastReply = sum.lastReply
		}
	}
	r.Note, r.Settling, r.Pending = e.note, e.before, e.pending
	return r
}

// detailOf says more on a session's reason r or its status.
func detailOf(s *source, e *entry, r Reason) string {
	switch {
	case r == Undeliverable:
		return s.held[e.s.ID].Err
	case e.s.Status == Failed || e.s.Status == Cancelled:
		return e.detail
	}
	return ""
}

// firstLine is the first non-empty line of a reply, sanitized and bounded.
func firstLine(s string) string {
	if len(s) > 4*MaxReply+1024 {
		s = s[:4*MaxReply+1024] // enough for the first line; sanitize sees no more
	}
	for _, l := range strings.Split(sanitize.Text(s), "\n") {
		if l = PlainLine(l); l != "" {
			return clip(l, MaxReply)
		}
	}
	return ""
}

// clip cuts s to n runes, an ellipsis marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
