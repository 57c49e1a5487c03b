package tui

import (
	"sort"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/tui/render"
)

// searchState is the transcript search: input while typing (highlighted
// live), query once committed with enter; n/N then move between matching
// items.
type searchState struct {
	typing  bool
	input   string
	query   string
	matches int // items matching query, counted on commit
	found   int // matches in them (foundText)
	// pending: the committed query's pass over the session runs (a
	// command); hits and scanned are set when its searchDoneMsg comes.
	pending bool
	// hits are the items that matched query, ascending, among the first
	// scanned items (the session's length at commit); items that came
	// after are looked at as n/N reach them.
	hits    []int
	scanned int
	// landAt: the search selects a hit opened from the search across
	// sessions, the match nearest this time (landIndex; zero: the next match).
	landAt time.Time
	// lines is set while the prompt reads a range of lines to copy
	// (copy.go), not a query.
	lines lineRange
}

// active is the text to highlight now.
func (s *searchState) active() string {
	if s.typing && s.input != "" {
		return s.input
	}
	return s.query
}

func (s *searchState) clear() { *s = searchState{} }

// searchKey edits the search input.
func (m *Model) searchKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.search.lines != (lineRange{}) {
		return m.copyLinesKey(msg)
	}
	m.search.typing = true
	switch msg.String() {
	case "esc":
		m.overlay = ovNone
		m.search.typing = false
		m.search.input = ""
	case "enter":
		m.overlay = ovNone
		m.search.typing = false
		return m.commitSearch(m.search.input)
	case "backspace", "ctrl+h":
		if r := []rune(m.search.input); len(r) > 0 {
			m.search.input = string(r[:len(r)-1])
		} else {
			m.overlay = ovNone
			m.search.typing = false
		}
	case "ctrl+u":
		m.search.input = ""
	default:
		if msg.Text != "" {
			m.search.input += msg.Text
		}
	}
	return nil
}

// searchDoneMsg is a search's pass over the session: the items that
// match, ascending, among the first scanned.
type searchDoneMsg struct {
	gen     uint64
	hits    []int
	found   int // matches in the hits
	scanned int
}

// commitSearch starts counting the items that match q and jumps to the
// first match after the selection when the count is in. The items in
// memory (the last hotItems and any not settled) are read here, on the
// UI's goroutine; the rest of a long session is in the spill file and is
// read in a command, so that keys never wait for a pass over a hundred
// thousand items. A newer search supersedes an older one still running.
func (m *Model) commitSearch(q string) tea.Cmd {
	m.searchGen++
	m.search.query = q
	m.search.matches, m.search.found = 0, 0
	m.search.pending, m.search.hits, m.search.scanned = false, nil, 0
	m.search.landAt = time.Time{}
	if q == "" {
		return nil
	}
	n := m.tl.Len()
	cold := m.tl.ColdItems()
	var hot []int
	hotFound := 0
	for i := range n {
		if cold.Has(i) {
			continue
		}
		if c := m.rend.Count(m.tl.Peek(i), q, 0); c > 0 {
			hot = append(hot, i)
			hotFound += c
		}
	}
	gen := m.searchGen
	m.search.pending = true
	return func() tea.Msg {
		var hits []int
		var buf render.FindBuffer
		found := hotFound
		for i := range n {
			if !cold.Has(i) {
				continue
			}
			if c := buf.Count(cold.Read(i), q, 0); c > 0 {
				hits = append(hits, i)
				found += c
			}
		}
		hits = append(hits, hot...)
		sort.Ints(hits)
		return searchDoneMsg{gen: gen, hits: hits, found: found, scanned: n}
	}
}

// handleSearchDone takes the count of the latest search (an older one's
// is dropped) and jumps to its first match after the selection.
func (m *Model) handleSearchDone(msg searchDoneMsg) {
	if msg.gen != m.searchGen || !m.search.pending {
		return
	}
	m.search.pending = false
	m.search.hits, m.search.scanned = msg.hits, msg.scanned
	m.search.matches, m.search.found = len(msg.hits), msg.found
	if m.search.matches == 0 {
		m.setFlash("no match for “"+m.search.query+"”", false)
		return
	}
	if at := m.search.landAt; !at.IsZero() {
		m.search.landAt = time.Time{}
		m.findNextAt(+1, m.landIndex(msg.hits, at))
		return
	}
	start := m.scanStart(+1)
	next := msg.hits[0] // wrapped, unless one comes after start
	if k := sort.SearchInts(msg.hits, start+1); k < len(msg.hits) {
		next = msg.hits[k]
	}
	m.findNextAt(+1, next)
}

// matchesAt says whether item i matches the committed query: from the
// search's pass for the items it covered, read now for later ones.
func (m *Model) matchesAt(i int, it func() *events.Item) bool {
	if i < m.search.scanned {
		k := sort.SearchInts(m.search.hits, i)
		return k < len(m.search.hits) && m.search.hits[k] == i
	}
	return m.rend.Contains(it(), m.search.query)
}

// scanStart is the item after which findNext looks for the next match
// (dir>0) or before which for the previous one.
func (m *Model) scanStart(dir int) int {
	start := m.tr.sel
	if start < 0 {
		start = lastVisible(m.owners)
		if dir > 0 {
			start = max(m.tr.top-1, -1)
		}
	}
	return start
}

// findNext moves to the next (dir>0) or previous match, wrapping around:
// within the selected item when it is an expanded tool (row by row), else
// to the next item containing the query. It scans text only; just the
// landing rows are laid out.
func (m *Model) findNext(dir int) { m.findNextAt(dir, -1) }

// findNextAt is findNext that, past a match inside the selected item,
// lands on item known without looking for it (-1: look).
func (m *Model) findNextAt(dir, known int) {
	q := m.search.query
	if q == "" {
		m.setFlash("no search — press / first", false)
		return
	}
	if m.search.pending {
		m.setFlash("searching for “"+q+"”…", false)
		return
	}
	n := m.tl.Len()
	if n == 0 {
		return
	}
	src := m.source()
	if sel := m.tr.sel; sel >= 0 && sel < n && m.expanded[m.tl.At(sel)] {
		// From the row at the top of the view, when the item is there.
		from := -1
		if dir < 0 {
			from = src.height(sel)
		}
		if m.tr.top == sel {
			from = m.tr.topLine
		}
		if row, ok := m.rend.Find(m.tl.At(sel), src.opts(sel), q, from, dir); ok {
			m.showMatchRow(sel, row)
			return
		}
	}
	start := m.scanStart(dir)
	for k := 1; k <= n; k++ {
		i := ((start+dir*k)%n + n) % n
		if known >= 0 {
			i = known
		} else if !m.matchesAt(i, func() *events.Item { return m.tl.Peek(i) }) {
			continue
		}
		wrapped := (dir > 0 && i <= start) || (dir < 0 && i >= start)
		msg := "item " + itoa(i+1) + "/" + itoa(n) + " · " + m.foundText()
		if wrapped {
			msg += " · wrapped"
		}
		if it := m.tl.At(i); !m.expanded[it] && m.hiddenMatch(it, q) {
			// The match is in what the collapsed item hides: open it.
			m.expanded[it] = true
		}
		if m.expanded[m.tl.At(i)] {
			from := -1
			if dir < 0 {
				from = src.height(i)
			}
			if row, ok := m.rend.Find(m.tl.At(i), src.opts(i), q, from, dir); ok {
				m.showMatchRow(i, row)
				if wrapped {
					m.setFlash(m.flash.text+" · wrapped", false)
				}
				return
			}
		}
		m.selectItem(i)
		m.setFlash(msg, false)
		return
	}
	m.setFlash("no match for “"+q+"”", false)
}

// showMatchRow selects item i and scrolls its line row to the top of the
// view (a match inside an expanded output).
func (m *Model) showMatchRow(i, row int) {
	src := m.source()
	h := m.transcriptHeight()
	m.tr.sel = i
	m.tr.stopFollowing(src, h)
	m.tr.follow = false
	m.tr.top, m.tr.topLine = i, row
	m.tr.clamp(src, h)
	m.setFlash("match on line "+itoa(row+1)+"/"+itoa(src.height(i))+" of item "+itoa(i+1)+"/"+itoa(src.count())+" · "+m.foundText(), false)
}

// searchLine is the input row while typing a search.
func (m *Model) searchLine() (string, *tea.Cursor) {
	if m.search.lines != (lineRange{}) {
		return m.copyLinesLine()
	}
	prompt := m.ch.Accent.Render("/")
	in := m.search.input
	line := prompt + in
	right := m.ch.Hint.Render("  enter search · esc cancel")
	if lineWidth(line)+lineWidth(right) <= m.w {
		line += right
	}
	c := tea.NewCursor(min(1+lineWidth(in), max(m.w-1, 0)), 0)
	return truncate(line, m.w), c
}
