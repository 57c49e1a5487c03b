package tui

import (
	"context"
	"errors"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/notify"
	"github.com/perch-tui/perch/tui/chrome"
)

// The board: with more than one source, the task list is every session of
// every source (board.Board keeps it live from each source's cheap list
// signal). Enter opens a session through its own source's backend, as
// attach does; esc comes back to the board where it was left. A session
// that comes to need the user while they look elsewhere rings the
// terminal (notify): the bytes go through the program (tea.Raw), never
// behind the renderer's back.

// Board is what the UI needs of many sources at once (Config.Board).
type Board struct {
	// Live is the board (board.Board).
	Live BoardSource
	// Open returns the backend a session of source opens through and
	// where its messages are kept; ok is false while the source has not
	// been opened (it is down, or still connecting). It must not block.
	Open func(source string) (b client.Backend, ob *Outbox, ok bool)
	// Notify says which notifications to send and how (notify.Options).
	Notify notify.Options
}

// BoardSource is the live board as the UI reads it: *board.Board.
type BoardSource interface {
	Snapshot(board.Filter) ([]board.SourceState, []board.Row)
	Updated() <-chan struct{}
	// MarkSeen writes the seen marks file: the UI calls it in a command.
	MarkSeen(source, id string) error
}

// boardUpdatedMsg: the board changed (its Updated channel fired).
type boardUpdatedMsg struct{}

// rowKey names a session of a source.
type rowKey struct{ source, id string }

func keyOf(r board.Row) rowKey { return rowKey{r.Source, r.ID} }

// boardState is the board as the UI shows it: the last snapshot, the
// filter, the selection, and what was last seen of every row (to tell
// what newly needs the user).
type boardState struct {
	cfg     *Board
	sources []board.SourceState
	rows    []board.Row // the filter's rows, needs-you first
	total   int         // rows before the filter
	need    int         // sessions that need the user
	filter  board.Filter

	sel    int
	selKey rowKey
	offset int
	page   int // rows per page, from the last frame

	// last is every row of the previous snapshot; listed the sources
	// that had listed their sessions by then: a row of a source listed
	// for the first time is the starting point, not news.
	last   map[rowKey]board.Row
	listed map[string]bool

	// open is the session on screen (the task view), blurred whether the
	// terminal lost focus: a session on screen in a focused terminal
	// rings nothing.
	open    rowKey
	blurred bool

	// outboxes per source, kept across visits (their touched tasks make
	// the exit report).
	outboxes map[string]*outboxes
}

func newBoardState(cfg *Board) *boardState {
	return &boardState{cfg: cfg, last: map[rowKey]board.Row{}, listed: map[string]bool{}, outboxes: map[string]*outboxes{}}
}

// boardCmd is the first look at the board, as soon as the program runs.
func boardCmd() tea.Msg { return boardUpdatedMsg{} }

// watchBoard forwards the board's changes to the program until ctx ends
// (run starts it next to the stream hub): Update then reads the board's
// snapshot, which is memory only.
func watchBoard(ctx context.Context, b BoardSource, send func(tea.Msg)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.Updated():
			send(boardUpdatedMsg{})
		}
	}
}

// refreshBoard reads the board again: rows, sources, the needs-you count,
// and the notifications of what changed since the last read.
func (m *Model) refreshBoard() tea.Cmd {
	bs := m.board
	srcs, all := bs.cfg.Live.Snapshot(board.Filter{})
	_, bs.rows = bs.cfg.Live.Snapshot(bs.filter)
	bs.sources, bs.total = srcs, len(all)
	bs.need = 0
	for _, r := range all {
		if r.Reason != board.None {
			bs.need++
		}
	}
	bs.reselect()
	return m.boardNews(srcs, all)
}

// boardNews compares every row with the last snapshot: a session that
// finished, failed or holds a message that cannot go rings the terminal,
// unless it is the one on screen in a focused terminal (that one is
// marked seen instead).
func (m *Model) boardNews(srcs []board.SourceState, all []board.Row) tea.Cmd {
	bs := m.board
	var ring []byte
	var cmds []tea.Cmd
	next := make(map[rowKey]board.Row, len(all))
	for _, r := range all {
		k := keyOf(r)
		next[k] = r
		if m.watching(k) {
			if r.Unread > 0 {
				cmds = append(cmds, bs.markSeenCmd(k))
			}
			continue
		}
		if !bs.listed[r.Source] || !ringsFor(r.Reason) || r.Settling || r.Pending {
			continue // a run's end is news once how it ended is in
		}
		if p, had := bs.last[k]; had && (p.Settling || !p.Pending && p.Reason == r.Reason && r.Unread <= p.Unread) {
			continue // a state the board found (a past run's end read at start) is no news
		}
		ring = append(ring, notify.Bytes(notification(r), bs.cfg.Notify)...)
	}
	bs.last = next
	for _, s := range srcs {
		bs.listed[s.Name] = s.Listed
	}
	if len(ring) > 0 {
		cmds = append(cmds, tea.Raw(string(ring)))
	}
	return tea.Batch(cmds...)
}

// ringsFor: the reasons a notification is sent for (a paused queue is
// the user's own doing; an agent that asks is stopped until answered).
func ringsFor(r board.Reason) bool {
	return r == board.Reply || r == board.RunFailed || r == board.Undeliverable || r == board.Permission || r == board.Input
}

// notification names the session, its source and why it needs the user.
func notification(r board.Row) notify.Notification {
	name := r.Name
	if name == "" {
		name = shortID(r.ID)
	}
	body := r.Reason.Text()
	switch {
	case r.Detail != "":
		body += ": " + r.Detail
	case r.LastReply != "" && r.Reason != board.Undeliverable:
		body += ": " + r.LastReply
	}
	return notify.Notification{Title: "perch: " + name + " (" + board.SourceLabel(r.Source) + ")", Body: body}
}

// watching: the session is on screen and the terminal has focus.
func (m *Model) watching(k rowKey) bool {
	return m.mode == modeTask && m.board.open == k && !m.board.blurred
}

// markSeenCmd records that the user saw a session (a file write: a
// command).
func (bs *boardState) markSeenCmd(k rowKey) tea.Cmd {
	live := bs.cfg.Live
	return func() tea.Msg {
		_ = live.MarkSeen(k.source, k.id) // a mark not saved is only an unread mark too many
		return nil
	}
}

// reselect keeps the selection on the same session when rows move.
func (bs *boardState) reselect() {
	for i, r := range bs.rows {
		if keyOf(r) == bs.selKey {
			bs.sel = i
			return
		}
	}
	bs.clamp()
}

func (bs *boardState) clamp() {
	bs.sel = max(min(bs.sel, len(bs.rows)-1), 0)
	if bs.sel < len(bs.rows) {
		bs.selKey = keyOf(bs.rows[bs.sel])
	}
}

func (bs *boardState) move(d int) {
	bs.sel += d
	bs.clamp()
}

func (bs *boardState) selected() (board.Row, bool) {
	if bs.sel < 0 || bs.sel >= len(bs.rows) {
		return board.Row{}, false
	}
	return bs.rows[bs.sel], true
}

// statusCycle is what s steps through: everything, what needs you, then
// each status.
var statusCycle = []board.Status{"", "needs you", board.Generating, board.Idle, board.Failed, board.Cancelled, board.Stopped, board.Waiting, board.Exited, board.Disconnected}

func (bs *boardState) cycleStatus() {
	cur := board.Status("")
	if bs.filter.NeedsYou {
		cur = "needs you"
	} else if bs.filter.Status != "" {
		cur = bs.filter.Status
	}
	i := 0
	for j, s := range statusCycle {
		if s == cur {
			i = j
		}
	}
	next := statusCycle[(i+1)%len(statusCycle)]
	bs.filter.NeedsYou = next == "needs you"
	bs.filter.Status = ""
	if !bs.filter.NeedsYou {
		bs.filter.Status = next
	}
}

func (bs *boardState) cycleSource() {
	names := []string{""}
	for _, s := range bs.sources {
		names = append(names, s.Name)
	}
	i := 0
	for j, n := range names {
		if n == bs.filter.Source {
			i = j
		}
	}
	bs.filter.Source = names[(i+1)%len(names)]
}

// boardKey handles keys on the board.
func (m *Model) boardKey(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	bs := m.board
	page := max(bs.page, 1)
	switch {
	case key.Matches(msg, k.Help):
		m.overlay = ovHelp
		return nil
	case key.Matches(msg, k.Quit):
		m.quitting = true
		return nil
	case msg.String() == "esc":
		bs.filter = board.Filter{}
	case key.Matches(msg, k.BoardStatus):
		bs.cycleStatus()
	case key.Matches(msg, k.BoardSource):
		bs.cycleSource()
	case key.Matches(msg, k.ListUp):
		bs.move(-1)
		return nil
	case key.Matches(msg, k.ListDown):
		bs.move(+1)
		return nil
	case key.Matches(msg, k.ListPgUp):
		bs.move(-page)
		return nil
	case key.Matches(msg, k.ListPgDown):
		bs.move(page)
		return nil
	case key.Matches(msg, k.ListTop):
		bs.sel = 0
		bs.clamp()
		return nil
	case key.Matches(msg, k.ListBottom):
		bs.sel = len(bs.rows) - 1
		bs.clamp()
		return nil
	case key.Matches(msg, k.Attach):
		if r, ok := bs.selected(); ok {
			return m.openBoardRow(r)
		}
		return nil
	case key.Matches(msg, k.Filter):
		m.overlay = ovFilter
		return nil
	case key.Matches(msg, k.FindAll):
		return m.openFind()
	default:
		return nil
	}
	return m.refreshBoard()
}

// boardFilterKey edits the board's name filter; the board narrows as you
// type.
func (m *Model) boardFilterKey(msg tea.KeyPressMsg) tea.Cmd {
	bs := m.board
	f := &bs.filter.Text
	switch msg.String() {
	case "esc":
		*f = ""
		m.overlay = ovNone
	case "enter":
		m.overlay = ovNone
		if r, ok := bs.selected(); ok && len(bs.rows) == 1 {
			return m.openBoardRow(r)
		}
		return nil
	case "up", "ctrl+p":
		bs.move(-1)
		return nil
	case "down", "ctrl+n":
		bs.move(+1)
		return nil
	case "backspace", "ctrl+h":
		if r := []rune(*f); len(r) > 0 {
			*f = string(r[:len(r)-1])
		}
	case "ctrl+u":
		*f = ""
	default:
		if msg.Text == "" {
			return nil
		}
		*f += msg.Text
	}
	return m.refreshBoard()
}

// openBoardRow opens a session exactly as attach does, through its own
// source's backend and outbox, and marks it seen.
func (m *Model) openBoardRow(r board.Row) tea.Cmd {
	bs := m.board
	b, ob, ok := bs.cfg.Open(r.Source)
	if !ok || b == nil {
		m.setFlash("source "+oneLine(r.Source)+" is not connected yet", true)
		return nil
	}
	o := bs.outboxes[r.Source]
	if o == nil || o.d.Backend != b {
		o = newOutboxes(ob, b)
		bs.outboxes[r.Source] = o
	}
	m.b, m.ob = b, o
	m.caps = capsOf(b)
	m.keys = newKeyMap().with(m.cfg.Keys)
	m.keys.limitTo(m.caps)
	k := keyOf(r)
	bs.open, bs.selKey = k, k
	attach := m.attach(events.Task{ID: r.ID, Name: r.Name, Status: taskStatus(r.Status), Updated: r.Updated})
	return tea.Batch(attach, bs.markSeenCmd(k))
}

// leaveBoardSession is detach's part on the board: what was on screen is
// seen, and nothing is on screen any more.
func (m *Model) leaveBoardSession() tea.Cmd {
	if m.board == nil {
		return m.seenCmd() // perch attach: the board's marks too
	}
	if m.board.open == (rowKey{}) {
		return nil
	}
	k := m.board.open
	m.board.open = rowKey{}
	return tea.Batch(m.board.markSeenCmd(k), m.refreshBoard())
}

// allOutboxes is every outbox the UI used: on the board, each visited
// source's, in the order of the sources.
func (m *Model) allOutboxes() []*outboxes {
	if m.board == nil {
		return []*outboxes{m.ob}
	}
	var out []*outboxes
	for _, s := range m.board.sources {
		if o := m.board.outboxes[s.Name]; o != nil {
			out = append(out, o)
		}
	}
	return out
}

// taskStatus is a board status as a task's.
func taskStatus(s board.Status) string {
	switch s {
	case board.Generating:
		return events.StatusGenerating
	case board.Stopped:
		return events.StatusStopped
	case board.Waiting:
		return events.StatusWaiting
	case board.Exited:
		return events.StatusExited
	}
	return events.StatusIdle
}

// watchTask streams a task's events: on the board through the backend
// and outbox of the session's source.
func (m *Model) watchTask(id string) {
	if sc, ok := m.ctl.(sourceControl); ok && (m.board != nil || m.replay != nil) {
		sc.WatchTaskOn(m.gen, m.b, m.ob.watch, id)
		return
	}
	m.ctl.WatchTask(m.gen, id)
}

// boardView draws the board (chrome.Board).
func (m *Model) boardView() ([]string, *tea.Cursor) {
	bs := m.board
	scr := m.listScreen()
	hints, _ := m.hintsLine()
	scr.Hints = hints
	f := bs.filter
	out, lay := m.ch.Board(chrome.BoardList{Sources: bs.sources, Rows: bs.rows, Total: bs.total, Sel: bs.sel, Offset: bs.offset,
		Filter: f.Text, Filtering: m.overlay == ovFilter, Status: f.Status, Source: f.Source, NeedsYou: f.NeedsYou, Need: bs.need}, scr)
	bs.page, bs.offset = lay.Rows, lay.Offset
	var cur *tea.Cursor
	if m.overlay == ovFilter && lay.TitleWidth < m.w && m.h > 0 {
		cur = tea.NewCursor(lay.TitleWidth, 0)
	}
	return out, cur
}

// boardTitle is the window title with the needs-you count.
func (m *Model) boardTitle(base string) string {
	if m.board == nil {
		return base
	}
	return chrome.NeedsYouTitle(base, m.board.need)
}

// handleFocus records whether the terminal has focus: back in focus, the
// session on screen is seen.
func (m *Model) handleFocus(focused bool) tea.Cmd {
	if m.board == nil {
		return nil
	}
	m.board.blurred = !focused
	if focused {
		return m.refreshBoard()
	}
	return nil
}

// noSession is the UI's backend on the board before a session is opened:
// every session has its own source's backend (Board.Open).
type noSession struct{}

var errNoSession = errors.New("open a session on the board first")

func (noSession) Name() string                                    { return "board" }
func (noSession) URL() string                                     { return "" }
func (noSession) Capabilities() client.Capabilities               { return client.Capabilities{} }
func (noSession) Sessions(context.Context) ([]events.Task, error) { return nil, errNoSession }
func (noSession) Session(context.Context, string) (events.Task, error) {
	return events.Task{}, errNoSession
}
func (noSession) Follow(context.Context, string, func(client.Update)) error { return errNoSession }
func (noSession) Send(context.Context, string, client.Message) (client.SendResult, error) {
	return client.SendResult{}, errNoSession
}
func (noSession) Cancel(context.Context, string) ([]events.QueuedMessage, error) {
	return nil, errNoSession
}
func (noSession) Create(context.Context, client.CreateRequest) (events.Task, error) {
	return events.Task{}, errNoSession
}
