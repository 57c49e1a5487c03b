package tui

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/tui/chrome"
)

// Search across every session perch has indexed (the find_all key on the
// task list or the board): the query runs through Config.Search in a
// command, never in Update, and a newer query supersedes one still
// running. Enter opens the hit's session: a session the list or the board
// holds is attached as its own Enter would; any other is replayed
// read-only through Config.OpenIndexed. Once its transcript is in, the
// transcript search for the matched words selects the hit.

// SearchHit is one message of the index that matched (cli fills it from
// the index; tests fake it).
type SearchHit struct {
	Session, System, Title string
	// Deleted: the session's source file is gone; it opens from the
	// index's copy.
	Deleted    bool
	At         time.Time
	Role, Tool string
	// Snippet is the text around the match in parts; the parts with
	// Match set are what the query matched. The UI sanitizes them again.
	Snippet []SnippetPart
}

// SnippetPart is a piece of a hit's snippet.
type SnippetPart struct {
	Text  string
	Match bool
}

// ErrNoIndex is what Config.Search returns when there is no index yet,
// or an empty one: the overlay then says how to fill it.
var ErrNoIndex = errors.New("no session is indexed yet")

// IndexedSession is a session Config.OpenIndexed opened for replay: its
// backend (read-only), the session's id in it, and Close, called once
// the UI leaves it (it may remove a temporary copy).
type IndexedSession struct {
	Backend client.Backend
	TaskID  string
	Close   func()
}

// findState is the overlay: the query typed, the hits of the last search.
type findState struct {
	input string
	// results: keys move in the hits; otherwise they edit the input.
	results bool
	gen     uint64
	cancel  context.CancelFunc // the running search's
	ran     string             // the query the hits are for
	pending bool
	hits    []SearchHit
	err     error
	sel     int
	offset  int
	page    int // hits per page, from the last frame
}

// findDoneMsg is a search's answer.
type findDoneMsg struct {
	gen  uint64
	hits []SearchHit
	err  error
}

// indexedOpenMsg is Config.OpenIndexed's answer for hit.
type indexedOpenMsg struct {
	gen uint64
	s   IndexedSession
	err error
	hit SearchHit
}

// replayed is the session opened from the index, and what the UI showed
// through before it (restored when the user leaves it).
type replayed struct {
	prevB    client.Backend
	prevOb   *outboxes
	prevCaps uiCaps
	prevKeys keyMap
	close    func()
}

// landing is the hit to select once the opened session's transcript is
// in: the matched text, searched as the transcript search does, and the
// message's time (landIndex).
type landing struct {
	text string
	at   time.Time
}

// openFind shows the overlay (the last query and hits kept).
func (m *Model) openFind() tea.Cmd {
	if m.cfg.Search == nil {
		return nil
	}
	m.overlay = ovFind
	m.find.results = m.find.input != "" && m.find.input == m.find.ran && len(m.find.hits) > 0
	return nil
}

// findKey handles keys in the overlay.
func (m *Model) findKey(msg tea.KeyPressMsg) tea.Cmd {
	f := &m.find
	k := &m.keys
	if f.results {
		switch {
		case msg.String() == "esc":
			m.overlay = ovNone
		case key.Matches(msg, k.ListUp):
			m.moveFind(-1)
		case key.Matches(msg, k.ListDown):
			m.moveFind(+1)
		case key.Matches(msg, k.ListPgUp):
			m.moveFind(-m.findPage())
		case key.Matches(msg, k.ListPgDown):
			m.moveFind(m.findPage())
		case key.Matches(msg, k.Attach):
			return m.openHit()
		case msg.String() == "backspace" || msg.Text != "":
			// Back to the query: the key edits it.
			f.results = false
			return m.findKey(msg)
		}
		return nil
	}
	switch msg.String() {
	case "esc":
		m.overlay = ovNone
	case "enter":
		if strings.TrimSpace(f.input) == "" {
			return nil
		}
		if f.input == f.ran && len(f.hits) > 0 && !f.pending {
			return m.openHit()
		}
		return m.runFind()
	case "up", "ctrl+p":
		m.moveFind(-1)
	case "down", "ctrl+n":
		m.moveFind(+1)
	case "backspace", "ctrl+h":
		if r := []rune(f.input); len(r) > 0 {
			f.input = string(r[:len(r)-1])
		}
	case "ctrl+u":
		f.input = ""
	default:
		if msg.Text != "" {
			f.input += msg.Text
		}
	}
	return nil
}

func (m *Model) moveFind(d int) {
	f := &m.find
	f.sel = max(min(f.sel+d, len(f.hits)-1), 0)
}

// findPage is how many hits the last frame showed (two rows each).
func (m *Model) findPage() int { return max(m.find.page, 1) }

// runFind searches the index for the input in a command; a search still
// running is cancelled, and its answer dropped.
func (m *Model) runFind() tea.Cmd {
	f := &m.find
	if f.cancel != nil {
		f.cancel()
	}
	f.gen++
	f.ran, f.pending, f.err = f.input, true, nil
	ctx, cancel := context.WithTimeout(m.ctx, callTimeout)
	f.cancel = cancel
	gen, search, q := f.gen, m.cfg.Search, strings.TrimSpace(f.input)
	return func() tea.Msg {
		defer cancel()
		hits, err := search(ctx, q)
		return findDoneMsg{gen: gen, hits: hits, err: err}
	}
}

// handleFindDone takes the latest search's hits, newest first.
func (m *Model) handleFindDone(msg findDoneMsg) {
	f := &m.find
	if msg.gen != f.gen {
		return
	}
	f.pending, f.cancel = false, nil
	// A copy: the order is the UI's, the caller's slice is left alone.
	f.hits, f.err, f.sel, f.offset = slices.Clone(msg.hits), msg.err, 0, 0
	sort.SliceStable(f.hits, func(i, j int) bool { return f.hits[i].At.After(f.hits[j].At) })
	f.results = len(f.hits) > 0 && m.overlay == ovFind
}

// openHit opens the selected hit's session: attached when the board or
// the list holds it, else replayed from the index.
func (m *Model) openHit() tea.Cmd {
	f := &m.find
	if f.sel < 0 || f.sel >= len(f.hits) {
		return nil
	}
	h := f.hits[f.sel]
	land := hitLanding(h, f.ran)
	if m.board != nil {
		if r, ok := m.boardRowByID(h.Session); ok {
			cmd := m.openBoardRow(r)
			if m.mode == modeTask {
				m.landing = land
			}
			return cmd
		}
	} else if t, ok := m.list.byID(h.Session); ok {
		cmd := m.attach(t)
		m.landing = land
		return cmd
	}
	if m.cfg.OpenIndexed == nil {
		m.setFlash("session "+shortID(h.Session)+" cannot be opened here", true)
		return nil
	}
	m.setFlash("opening "+shortID(h.Session)+"…", false)
	gen, open, ctx := f.gen, m.cfg.OpenIndexed, m.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		s, err := open(ctx, h.Session)
		return indexedOpenMsg{gen: gen, s: s, err: err, hit: h}
	}
}

// boardRowByID is the board's row of session id, whatever the filter.
func (m *Model) boardRowByID(id string) (board.Row, bool) {
	bs := m.board
	var found board.Row
	ok := false
	for k, r := range bs.last {
		// Several sources could know one id: the first by name wins, so
		// that the same one always does.
		if k.id == id && (!ok || k.source < found.Source) {
			found, ok = r, true
		}
	}
	return found, ok
}

// hitLanding is what selects h in its transcript: the first matched part
// (what the index matched, a prefix's whole word included), else the
// query.
func hitLanding(h SearchHit, query string) landing {
	for _, p := range h.Snippet {
		if t := strings.TrimSpace(oneLine(p.Text)); p.Match && t != "" {
			return landing{text: t, at: h.At}
		}
	}
	return landing{text: strings.Trim(strings.TrimSpace(query), `"*`), at: h.At}
}

// handleIndexedOpen shows the session OpenIndexed opened, read-only,
// through its own backend; leaving it (detach) goes back to what was.
func (m *Model) handleIndexedOpen(msg indexedOpenMsg) tea.Cmd {
	if msg.err != nil {
		m.setFlash("session "+shortID(msg.hit.Session)+": "+errReason(msg.err), true)
		return nil
	}
	if msg.gen != m.find.gen || m.mode != modeList {
		// The user moved on: close what was opened for nothing.
		return closeCmd(msg.s.Close)
	}
	if m.replay == nil {
		m.replay = &replayed{prevB: m.b, prevOb: m.ob, prevCaps: m.caps, prevKeys: m.keys}
	}
	m.replay.close = msg.s.Close
	b := msg.s.Backend
	m.b, m.ob = b, newOutboxes(nil, b)
	m.caps = capsOf(b)
	m.keys = newKeyMap().with(m.cfg.Keys)
	m.keys.limitTo(m.caps)
	id := msg.s.TaskID
	if id == "" {
		id = msg.hit.Session
	}
	cmd := m.attach(events.Task{ID: id, Name: msg.hit.Title})
	m.landing = hitLanding(msg.hit, m.find.ran)
	m.flash = flash{seq: m.flash.seq}
	return cmd
}

func closeCmd(close func()) tea.Cmd {
	if close == nil {
		return nil
	}
	return func() tea.Msg { close(); return nil }
}

// leaveReplay goes back to the backend the UI showed before a replay
// from the index, and returns the replay's Close (nil when there was
// none).
func (m *Model) leaveReplay() func() {
	r := m.replay
	if r == nil {
		return nil
	}
	m.replay = nil
	m.b, m.ob, m.caps, m.keys = r.prevB, r.prevOb, r.prevCaps, r.prevKeys
	return r.close
}

// landOnHit runs the transcript search for the hit once the opened
// session's transcript is in (a batch that leaves the stream caught up).
func (m *Model) landOnHit(msg streamBatchMsg) tea.Cmd {
	if m.landing.text == "" || msg.Behind || (m.tl.Len() == 0 && !msg.Ended) {
		return nil
	}
	l := m.landing
	m.landing = landing{}
	cmd := m.commitSearch(l.text)
	m.search.landAt = l.at
	return cmd
}

// landIndex is the match to select for a search that opened a hit: the
// last one at or before the hit's time (a tool's result is indexed at the
// result, its item is timed by the call), else the first.
func (m *Model) landIndex(hits []int, at time.Time) int {
	to := at.Add(time.Millisecond) // the index keeps milliseconds
	k := sort.Search(len(hits), func(k int) bool {
		it := m.tl.Peek(hits[k])
		return it != nil && it.Created.After(to)
	})
	return hits[max(k-1, 0)]
}

// findView draws the overlay over the whole screen: the query, what the
// search said, the hits (two rows each), the keys.
func (m *Model) findView() ([]string, *tea.Cursor) {
	f := &m.find
	prompt := m.ch.Title.Render("search all sessions") + " " + m.ch.Accent.Render("›") + " "
	in := oneLine(f.input)
	out := []string{truncate(prompt+in, m.w)}
	var cur *tea.Cursor
	if !f.results {
		if x := lineWidth(prompt) + lineWidth(in); x < m.w {
			cur = tea.NewCursor(x, 0)
		}
	}
	// What the search said, wrapped: how to fill an empty index is read
	// whole at 80 columns.
	st, status := m.ch.Hint, ""
	switch {
	case f.pending:
		status = "searching…"
	case errors.Is(f.err, ErrNoIndex):
		st, status = m.ch.Warn, "no session is indexed yet: run perch index in a shell to fill the index, then search again"
	case f.err != nil:
		st, status = m.ch.Err, errReason(f.err)
	case f.ran == "":
		status = `words, "a phrase", prefix* · enter searches`
	case len(f.hits) == 0:
		status = "no message matches “" + oneLine(f.ran) + "”"
	case len(f.hits) == 1:
		status = "1 hit"
	default:
		status = itoa(len(f.hits)) + " hits, newest first"
	}
	for _, l := range chrome.WrapLines(status, m.w) {
		out = append(out, truncate(st.Render(l), m.w))
	}
	out = append(out, "")
	page := max((m.h-1-len(out))/2, 1)
	f.page = page
	if f.sel < f.offset {
		f.offset = f.sel
	}
	if f.sel >= f.offset+page {
		f.offset = f.sel - page + 1
	}
	for i := f.offset; i < len(f.hits) && i < f.offset+page && len(out)+2 <= m.h-1; i++ {
		a, b := m.hitRows(f.hits[i], i == f.sel)
		out = append(out, a, b)
	}
	for len(out) < m.h-1 {
		out = append(out, "")
	}
	hints, _ := m.hintsLine()
	out = append(out[:max(m.h-1, 0)], hints)
	return out, cur
}

// hitRows are a hit's two rows: when, which session, what; the snippet
// with the matches styled (its text never read as markup).
func (m *Model) hitRows(h SearchHit, sel bool) (string, string) {
	gutter := "  "
	if sel {
		gutter = m.ch.SelectedGutter.Render("▌") + " "
	}
	name := oneLine(h.Title)
	if name == "" {
		name = shortID(h.Session)
	}
	meta := h.At.In(m.now.Location()).Format("2006-01-02 15:04") + "  " + m.ch.Bold.Render(truncate(name, 40)) + "  " + m.ch.Dim.Render(oneLine(h.System))
	if h.Deleted {
		meta += " " + m.ch.Warn.Render("(source deleted)")
	}
	who := oneLine(h.Role)
	if t := oneLine(h.Tool); t != "" {
		who += " " + t
	}
	meta += "  " + m.ch.Hint.Render(who)
	var b strings.Builder
	for _, p := range h.Snippet {
		t := sanitize.Line(chrome.CutText(p.Text, 4<<10))
		t = strings.NewReplacer("\t", " ", "⏎", " ").Replace(t)
		if p.Match {
			b.WriteString(m.ch.Match.Render(t))
			continue
		}
		b.WriteString(t)
	}
	return truncate(gutter+meta, m.w), truncate("    "+b.String(), m.w)
}

// findHints are the overlay's keys.
func (m *Model) findHints() []chrome.Hint {
	if m.find.results {
		return []chrome.Hint{major(m.keyLabel("attach", "enter"), "open"), minor(m.keyPair("list_down", "list_up", "j/k"), "move"),
			minor("type", "edit the query"), vital("esc", "close")}
	}
	return []chrome.Hint{major("enter", "search"), minor("↑/↓", "move"), vital("esc", "close")}
}
