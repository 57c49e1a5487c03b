package chrome

import (
	"slices"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/events"
)

// BoardList is the board of every source's sessions as a frame shows it.
type BoardList struct {
	Sources []board.SourceState
	Rows    []board.Row // the rows the filter selects, needs-you first
	Total   int         // sessions on the board before the filter
	Sel     int         // the selected row (an index into Rows)
	Offset  int         // the row at the top of the last frame
	// Filter is the name filter; Filtering: it is being typed.
	Filter    string
	Filtering bool
	// Status and Source are the other filters ("" for any); NeedsYou
	// shows only the sessions that need the user.
	Status   board.Status
	Source   string
	NeedsYou bool
	// Need counts the sessions that need the user (every source).
	Need int
}

// BoardLayout is where a board frame put things.
type BoardLayout struct {
	Rows       int // session rows per page
	Offset     int // the row at the top
	TitleWidth int // cells of the header's left part (the filter's cursor follows it)
}

// Board draws the board: a header, a line per source that is not live
// (with the reason), one line per session, the selected session's
// details, a status row and the hints. It returns exactly s.Height lines.
func (c Chrome) Board(l BoardList, s ListScreen) ([]string, BoardLayout) {
	w, h := s.Width, s.Height
	out := make([]string, 0, h)
	var lay BoardLayout

	title := c.Title.Render("perch") + c.Dim.Render(" · board "+strconv.Itoa(len(l.Rows)))
	if len(l.Rows) != l.Total {
		title += c.Dim.Render("/" + strconv.Itoa(l.Total))
	}
	var filters []string
	if l.NeedsYou {
		filters = append(filters, "needs you")
	}
	if l.Status != "" {
		filters = append(filters, string(l.Status))
	}
	if l.Source != "" {
		filters = append(filters, "source "+OneLine(board.SourceLabel(l.Source)))
	}
	if len(filters) > 0 {
		title += "  " + c.Dim.Render("only: ") + strings.Join(filters, ", ")
	}
	switch {
	case l.Filtering:
		title += "  " + c.Accent.Render("/") + l.Filter
	case l.Filter != "":
		title += "  " + c.Dim.Render("filter: ") + l.Filter + c.Hint.Render(" (esc clears)")
	}
	lay.TitleWidth = Width(title)
	need := ""
	if l.Need > 0 {
		need = c.Warn.Render(strconv.Itoa(l.Need) + " need you")
	}
	out = append(out, Spread(title, need, w))

	// A line per source that is not live: a source that is down never
	// hides the others, and says why on its own line.
	var down []string
	for _, src := range l.Sources {
		if src.Conn == board.Live {
			continue
		}
		st := c.Warn
		if src.Conn != board.Connecting && src.Conn != board.Retrying {
			st = c.Err
		}
		sys := ""
		if src.System != "" {
			sys = c.Dim.Render(" (" + OneLine(src.System) + ")")
		}
		down = append(down, Truncate("  "+st.Render("⚠ ")+OneLine(board.SourceLabel(src.Name))+sys+c.Dim.Render(" · ")+st.Render(OneLine(src.Line(s.Now))), w))
	}
	footer := 1 // status
	if h >= 8 {
		footer = 2 // and hints
	}
	detail := 0
	if h >= 12 {
		detail = 1 // the selected session's reason and last reply
	}
	maxDown := max(h-1-footer-detail-3, 0)
	if len(down) > maxDown {
		more := len(down) - maxDown + 1
		down = append(down[:max(maxDown-1, 0)], Truncate("  "+c.Dim.Render("… "+strconv.Itoa(more)+" more sources not live"), w))
		down = down[:min(len(down), maxDown)]
	}
	out = append(out, down...)

	rowsH := max(h-len(out)-footer-detail, 0)
	lay.Rows = max(rowsH, 1)
	lay.Offset = l.Offset
	if len(l.Rows) == 0 {
		msg := "no sessions yet"
		switch {
		case l.Filter != "":
			msg = "no session matches “" + l.Filter + "”"
		case len(filters) > 0:
			msg = "no session is " + strings.Join(filters, ", ")
		case !anyListed(l.Sources):
			msg = "loading sessions…"
		}
		out = append(out, c.centred([]string{msg}, rowsH, w)...)
	} else {
		cols := boardColumns(w, l.Sources, l.Rows)
		if rowsH >= 6 {
			// Column heads: what the marks and numbers are.
			out = append(out, c.boardHeader(cols, w))
			rowsH--
			lay.Rows = max(rowsH, 1)
		}
		off := scrollOffset(l.Offset, l.Sel, lay.Rows, len(l.Rows))
		lay.Offset = off
		for r := off; r < min(off+rowsH, len(l.Rows)); r++ {
			out = append(out, c.boardRow(l.Rows[r], r == l.Sel, cols, s))
		}
		for i := len(l.Rows) - off; i < rowsH; i++ {
			out = append(out, "")
		}
	}
	if detail > 0 {
		line := ""
		if l.Sel >= 0 && l.Sel < len(l.Rows) {
			line = c.boardDetail(l.Rows[l.Sel], w)
		}
		out = append(out, line)
	}
	out = append(out, c.boardStatus(l, s))
	if footer == 2 {
		out = append(out, s.Hints)
	}
	for len(out) < h {
		out = append(out, "")
	}
	return out[:h], lay
}

func anyListed(ss []board.SourceState) bool {
	for _, s := range ss {
		if s.Listed {
			return true
		}
	}
	return false
}

// boardCols says which columns a row has room for, and their widths.
type boardCols struct {
	name, source, reason, status, counts, usage, session, age, reply int
	system                                                           bool
}

// boardColumns lays the row's columns out in w cells: the name, the
// needs-you reason, the source and the age stay; the status word, the
// counts, tokens and cost, the whole session's tokens and cost (only when
// a row has them: a local CLI's sessions) and the last reply go first on
// narrow terminals, in that order of priority.
func boardColumns(w int, sources []board.SourceState, rows []board.Row) boardCols {
	src := 6
	for _, s := range sources {
		src = max(src, min(Width(OneLine(board.SourceLabel(s.Name))), 21))
	}
	longest := 0 // the longest name: what the name column could use
	anySession := false
	for _, r := range rows {
		longest = max(longest, Width(OneLine(r.Name)))
		anySession = anySession || SessionUsage(r) != ""
	}
	c := boardCols{source: src, reason: 13, age: 4}
	const fixed = 2 + 3 + 2 // gutter, unread mark, status icon
	// The name keeps 28 cells before an optional column is added.
	const minName = 28
	used := func() int {
		n := fixed + c.name + c.source + 1 + c.reason + 1 + c.age + 1
		for _, x := range []int{c.status, c.counts, c.usage, c.session, c.reply} {
			if x > 0 {
				n += x + 1
			}
		}
		if c.system {
			n += 7
		}
		return n
	}
	c.name = minName
	// Add the optional columns in order of priority while they fit.
	try := func(set func(), unset func()) {
		set()
		if used() > w {
			unset()
		}
	}
	try(func() { c.counts = 7 }, func() { c.counts = 0 })
	try(func() { c.status = 12 }, func() { c.status = 0 })
	try(func() { c.system = true }, func() { c.system = false })
	try(func() { c.usage = 14 }, func() { c.usage = 0 })
	if anySession {
		try(func() { c.session = 14 }, func() { c.session = 0 })
	}
	try(func() { c.reply = 24 }, func() { c.reply = 0 })
	if c.reply > 0 {
		// The name takes what its longest needs first (it is what a
		// row is found by), the last reply the rest.
		extra := max(w-used(), 0)
		grow := min(max(longest-c.name, 0), extra)
		c.name += grow
		c.reply += extra - grow
	} else {
		c.name += max(w-used(), 0)
	}
	return c
}

// boardHeader heads the columns of boardRow: NEW is the unread mark,
// QUE·HLD the daemon's queued messages (⧗) and perch's held ones (✎),
// RUN TOKENS/$ the tokens and cost of the last run, SESSION TOKENS/$ the
// whole session's.
func (c Chrome) boardHeader(cols boardCols, w int) string {
	var b strings.Builder
	b.WriteString("  NEW  " + pad("NAME", cols.name) + " ")
	if cols.system {
		b.WriteString(pad("SYSTEM", 6) + " ")
	}
	b.WriteString(pad("SOURCE", cols.source) + " ")
	if cols.status > 0 {
		b.WriteString(pad("STATUS", cols.status) + " ")
	}
	b.WriteString(pad("NEEDS YOU", cols.reason) + " ")
	if cols.counts > 0 {
		b.WriteString(pad("QUE·HLD", cols.counts) + " ")
	}
	if cols.usage > 0 {
		b.WriteString(padLeft("RUN TOKENS/$", cols.usage) + " ")
	}
	if cols.session > 0 {
		b.WriteString(padLeft("SESSION TOK/$", cols.session) + " ")
	}
	b.WriteString(padLeft("AGE", cols.age))
	if cols.reply > 0 {
		b.WriteString(" LAST REPLY")
	}
	return c.Dim.Render(Truncate(b.String(), w))
}

// pad fits s (styled) in exactly n cells.
func pad(s string, n int) string {
	s = Truncate(s, n)
	if d := n - Width(s); d > 0 {
		s += strings.Repeat(" ", d)
	}
	return s
}

// padLeft right-aligns s in n cells.
func padLeft(s string, n int) string {
	s = Truncate(s, n)
	if d := n - Width(s); d > 0 {
		s = strings.Repeat(" ", d) + s
	}
	return s
}

// ReasonWord is a needs-you reason in one word for a row.
func ReasonWord(r board.Reason) string {
	switch r {
	case board.Undeliverable:
		return "undeliverable"
	case board.RunFailed:
		return "run failed"
	case board.Reply:
		return "new reply"
	case board.Paused:
		return "paused queue"
	}
	return ""
}

// boardRow draws one session on one line.
func (c Chrome) boardRow(r board.Row, selected bool, cols boardCols, s ListScreen) string {
	gutter := "  "
	if selected {
		gutter = c.SelectedGutter.Render("▌") + " "
	}
	mark := "   "
	if r.Unread > 0 {
		n := "◆"
		if r.Unread > 1 {
			n += strconv.Itoa(min(r.Unread, 9))
		}
		mark = pad(c.Accent.Render(n), 3)
	}
	icon, word := c.statusIcon(r.Status)
	name := OneLine(r.Name)
	if name == "" {
		name = c.Dim.Render("(" + ShortID(OneLine(r.ID)) + ")")
	} else if selected {
		name = c.Bold.Render(name)
	}
	var b strings.Builder
	b.WriteString(gutter + mark + icon + " ")
	b.WriteString(pad(name, cols.name) + " ")
	if cols.system {
		b.WriteString(pad(c.Dim.Render(OneLine(r.System)), 6) + " ")
	}
	b.WriteString(pad(c.Dim.Render(OneLine(board.SourceLabel(r.Source))), cols.source) + " ")
	if cols.status > 0 {
		b.WriteString(pad(word, cols.status) + " ")
	}
	reason := ""
	switch r.Reason {
	case board.None:
	case board.Undeliverable, board.RunFailed:
		reason = c.Err.Render(ReasonWord(r.Reason))
	default:
		reason = c.Warn.Render(ReasonWord(r.Reason))
	}
	b.WriteString(pad(reason, cols.reason) + " ")
	if cols.counts > 0 {
		var cs []string
		if r.Queued > 0 {
			cs = append(cs, c.Warn.Render("⧗"+strconv.Itoa(r.Queued)))
		}
		if r.Held > 0 {
			cs = append(cs, c.Accent.Render("✎"+strconv.Itoa(r.Held)))
		}
		b.WriteString(pad(strings.Join(cs, " "), cols.counts) + " ")
	}
	if cols.usage > 0 {
		b.WriteString(padLeft(c.Dim.Render(usage(r)), cols.usage) + " ")
	}
	if cols.session > 0 {
		b.WriteString(padLeft(c.Dim.Render(SessionUsage(r)), cols.session) + " ")
	}
	b.WriteString(padLeft(c.Dim.Render(Age(r.Updated, s.Now)), cols.age))
	if reply := OneLine(r.LastReply); cols.reply > 0 && reply != "" {
		b.WriteString(" " + c.Dim.Render(Truncate(reply, cols.reply)))
	}
	return Truncate(b.String(), s.Width)
}

// usage is a row's tokens and cost, where the system reports them.
func usage(r board.Row) string {
	var parts []string
	if r.Tokens > 0 {
		parts = append(parts, Tokens(r.Tokens))
	}
	if r.HasCost {
		parts = append(parts, events.CostText(r.Cost))
	}
	return strings.Join(parts, " ")
}

// SessionUsage is a row's whole-session tokens and cost as every view
// writes them, where the system lists them ("" otherwise); "$?" when its
// tokens are known and its cost is not (a model without a price).
func SessionUsage(r board.Row) string {
	var parts []string
	if r.SessionTokens > 0 {
		parts = append(parts, Tokens(r.SessionTokens))
	}
	switch {
	case r.HasSessionCost:
		parts = append(parts, events.CostText(r.SessionCost))
	case r.SessionTokens > 0:
		parts = append(parts, "$?")
	}
	return strings.Join(parts, " ")
}

// Tokens is a token count in a few cells, the one way every view writes
// it: 950, 9.2k, 12k, 123k, 1.2M, 3.3G (a tenth below a hundred units,
// ".0" left out).
func Tokens(n int64) string {
	if n < 1000 {
		return strconv.FormatInt(n, 10)
	}
	v, unit := float64(n)/1e3, "k"
	switch {
	case n >= 1e9:
		v, unit = float64(n)/1e9, "G"
	case n >= 1e6:
		v, unit = float64(n)/1e6, "M"
	}
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64) + unit
	}
	return strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0") + unit
}

func (c Chrome) statusIcon(st board.Status) (icon, word string) {
	switch st {
	case board.Generating:
		return c.Accent.Render("●"), c.Accent.Render("generating")
	case board.Failed:
		return c.Err.Render("✗"), c.Err.Render("failed")
	case board.Cancelled:
		return c.Dim.Render("⊘"), c.Dim.Render("cancelled")
	case board.Stopped:
		return c.Dim.Render("■"), c.Dim.Render("stopped")
	case board.Waiting:
		return c.Warn.Render("◆"), c.Warn.Render("waiting")
	case board.Exited:
		return c.Dim.Render("■"), c.Dim.Render("exited")
	case board.Disconnected:
		return c.Warn.Render("?"), c.Warn.Render("disconnected")
	}
	return c.OK.Render("✓"), c.Dim.Render("idle")
}

// boardDetail is the selected session's line under the rows: why it needs
// the user, or its last reply.
func (c Chrome) boardDetail(r board.Row, w int) string {
	var parts []string
	if t := r.Reason.Text(); t != "" {
		t = "needs you: " + t
		if r.Detail != "" {
			t += " (" + OneLine(r.Detail) + ")"
		}
		parts = append(parts, c.Warn.Render(t))
	}
	switch {
	case r.LastReply != "":
		parts = append(parts, c.Dim.Render("“"+OneLine(r.LastReply)+"”"))
	case r.Note != "":
		parts = append(parts, c.Dim.Render("("+OneLine(r.Note)+")"))
	}
	if len(parts) == 0 {
		parts = append(parts, c.Dim.Render(OneLine(r.System)+" · "+OneLine(r.Source)+" · "+ShortID(OneLine(r.ID))))
	}
	if u := SessionUsage(r); u != "" {
		// After the reason, before the reply (which the width cuts).
		at := 0
		if r.Reason.Text() != "" {
			at = 1
		}
		parts = slices.Insert(parts, at, c.Dim.Render("session "+u))
	}
	return Truncate("  "+strings.Join(parts, c.Separator()), w)
}

// boardStatus summarises the board: sources live, sessions running.
func (c Chrome) boardStatus(l BoardList, s ListScreen) string {
	live := 0
	for _, src := range l.Sources {
		if src.Conn == board.Live {
			live++
		}
	}
	gen := 0
	for _, r := range l.Rows {
		if r.Status == board.Generating {
			gen++
		}
	}
	srcSeg := c.OK.Render(strconv.Itoa(live) + "/" + strconv.Itoa(len(l.Sources)) + " sources live")
	if live < len(l.Sources) {
		srcSeg = c.Warn.Render(strconv.Itoa(live) + "/" + strconv.Itoa(len(l.Sources)) + " sources live")
	}
	segs := []Segment{
		{srcSeg, 9},
		{c.Accent.Render(strconv.Itoa(gen) + " generating"), 5},
		{c.Dim.Render(strconv.Itoa(l.Total) + " sessions"), 4},
	}
	segs = c.withFlash(segs, s.Flash, s.FlashErr)
	return LayoutSegments(segs, c.Separator(), s.Width)
}

// NeedsYouTitle is the window title with the needs-you count.
func NeedsYouTitle(base string, need int) string {
	if need <= 0 {
		return base
	}
	return base + " (" + strconv.Itoa(need) + " need you)"
}
