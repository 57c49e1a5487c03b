package chrome

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
)

// SortTasks orders tasks newest first (as maria's web UI does), ties by id.
func SortTasks(ts []events.Task) {
	sort.SliceStable(ts, func(i, j int) bool {
		a, b := ts[i], ts[j]
		if !a.Created.Equal(b.Created) {
			return a.Created.After(b.Created)
		}
		return a.ID < b.ID
	})
}

// List is the task list as a frame shows it.
type List struct {
	Tasks    []events.Task // every task, newest first (SortTasks)
	Shown    []int         // indexes into Tasks passing the filter, in order
	Sel      int           // the selected row: an index into Shown
	Offset   int           // the shown row at the top of the last frame
	Answered bool          // a list (or a failure to get one) came: an empty list is not one still loading
	Filter   string
	// Filtering: the filter is being typed (the frame's cursor follows it).
	Filtering bool
	// Held is perch's own messages per task id, not delivered yet (nil:
	// none known).
	Held map[string]Held
	// Gone is perch's messages for sessions the list does not have any
	// more: a row of their own under the tasks.
	Gone Held
}

// Held counts perch's messages for a session: all not delivered yet, and
// of them the orphans (their session is gone). Sessions counts the
// sessions of List.Gone.
type Held struct{ Held, Orphans, Sessions int }

// ListScreen is the rest of what a task list frame shows.
type ListScreen struct {
	Width, Height int
	Conn          string // the connection segment (Connecting, or the tui's own)
	Backend       string // the backend's name, as its capabilities say
	Flash         string // a passing message, or ""
	FlashErr      bool
	Hints         string // the bottom row
	// Form, when not nil, returns the new-task form's lines for at most
	// rows rows, drawn under the list.
	Form    func(rows int) []string
	Now     time.Time
	Home    string // the user's home, shown as ~
	Spinner string // the spinner frame of generating tasks; "" draws a static icon
	// Unreachable, when not "", is why there is no list: the server
	// cannot be reached (shown wrapped instead of "no tasks yet").
	Unreachable string
	// Keys names the keys the list's words mention, as the user bound
	// them: "new_task", "to_held", "held_adopt", "held_to_composer"
	// (KeyActions' names); a missing one is its default.
	Keys map[string]string
}

// key is the key of action as s.Keys names it, else def.
func (s ListScreen) key(action, def string) string {
	if k := s.Keys[action]; k != "" {
		return k
	}
	return def
}

// ListLayout is where a task list frame put things.
type ListLayout struct {
	Rows           int // task rows per page
	Offset         int // the shown row at the top
	VisFrom, VisTo int // shown rows on screen
	TitleWidth     int // cells of the header's left part (the filter's cursor follows it)
	FormTop        int // the row the form starts on
}

// TaskList draws the task list: a header, one or two rows per task, the
// connection and hints. It returns exactly s.Height lines.
func (c Chrome) TaskList(l List, s ListScreen) ([]string, ListLayout) {
	w, h := s.Width, s.Height
	out := make([]string, 0, h)
	var lay ListLayout

	// header
	title := c.Title.Render("perch") + c.Dim.Render(" · tasks "+strconv.Itoa(len(l.Shown)))
	if len(l.Shown) != len(l.Tasks) {
		title += c.Dim.Render("/" + strconv.Itoa(len(l.Tasks)))
	}
	switch {
	case l.Filtering:
		title += "  " + c.Accent.Render("/") + l.Filter
	case l.Filter != "":
		title += "  " + c.Dim.Render("filter: ") + l.Filter + c.Hint.Render(" (esc clears)")
	}
	lay.TitleWidth = Width(title)
	out = append(out, Spread(title, s.Conn, w))

	footer := 1
	if h >= 8 {
		footer = 2
	}
	var form []string
	if s.Form != nil {
		form = s.Form(max(h-1-footer, 0))
	}
	rowsH := max(h-1-footer-len(form), 0)
	per := 2
	if rowsH < 6 {
		per = 1
	}
	lay.Rows = max(rowsH/per, 1)
	lay.Offset = l.Offset
	if len(l.Shown) == 0 {
		msg := "no tasks yet — press " + s.key("new_task", "n") + " to start one"
		if !l.Answered {
			msg = "loading tasks…"
		}
		if l.Filter != "" {
			msg = "no task matches “" + l.Filter + "”"
		}
		var msgs []string
		if s.Unreachable != "" && l.Filter == "" {
			// An unreachable server is not an empty one: say why, whole.
			msgs = WrapLines(s.Unreachable, w-4)
		} else {
			msgs = []string{msg}
		}
		out = append(out, c.centred(msgs, rowsH, w)...)
	} else {
		off := scrollOffset(l.Offset, l.Sel, lay.Rows, len(l.Shown))
		lay.Offset = off
		lay.VisFrom, lay.VisTo = off, min(off+lay.Rows, len(l.Shown))
		for r := lay.VisFrom; r < lay.VisTo; r++ {
			out = append(out, c.taskRow(l.Tasks[l.Shown[r]], l.Held[l.Tasks[l.Shown[r]].ID], r == l.Sel, per, s)...)
		}
		if g := l.Gone; g.Held > 0 && len(out) < 1+rowsH {
			out = append(out, c.goneRow(g, w, s))
		}
		for len(out) < 1+rowsH {
			out = append(out, "")
		}
		out = out[:1+rowsH]
	}
	lay.FormTop = len(out)
	out = append(out, form...)
	out = append(out, c.listStatus(l.Tasks, s))
	if footer == 2 {
		out = append(out, s.Hints)
	}
	for len(out) < h {
		out = append(out, "")
	}
	return out[:h], lay
}

// listStatus summarises the server: how many tasks run, the connection.
func (c Chrome) listStatus(tasks []events.Task, s ListScreen) string {
	gen, idle, stopped := 0, 0, 0
	for _, t := range tasks {
		switch t.Status {
		case events.StatusGenerating:
			gen++
		case events.StatusStopped:
			stopped++
		default:
			idle++
		}
	}
	segs := []Segment{
		{s.Conn, 9},
		{Styled(c.Bold, OneLine(s.Backend)), 6},
		{c.Accent.Render(strconv.Itoa(gen) + " generating"), 5},
		{c.Dim.Render(strconv.Itoa(idle) + " idle"), 4},
		{c.Dim.Render(strconv.Itoa(stopped) + " stopped"), 3},
	}
	segs = c.withFlash(segs, s.Flash, s.FlashErr)
	return LayoutSegments(segs, c.Separator(), s.Width)
}

// taskRow draws one task: icon, name, queue length and age on the first
// row; cwd and model dimmed on the second.
func (c Chrome) taskRow(t events.Task, held Held, selected bool, per int, s ListScreen) []string {
	w := s.Width
	gutter := "  "
	if selected {
		gutter = c.SelectedGutter.Render("▌") + " "
	}
	var icon string
	switch t.Status {
	case events.StatusGenerating:
		spin := s.Spinner
		if spin == "" {
			spin = "●"
		}
		icon = c.Accent.Render(spin)
	case events.StatusStopped:
		icon = c.Dim.Render("■")
	default:
		icon = c.OK.Render("✓")
	}
	name := OneLine(t.Name)
	if name == "" {
		name = c.Dim.Render("(unnamed " + ShortID(t.ID) + ")")
	} else if selected {
		name = c.Bold.Render(name)
	}
	var right []string
	if n := len(t.QueuedMessages); n > 0 {
		right = append(right, c.Warn.Render("⧗"+strconv.Itoa(n)))
	}
	if n := held.Held - held.Orphans; n > 0 {
		right = append(right, c.Accent.Render("✎"+strconv.Itoa(n)))
	}
	if held.Orphans > 0 {
		right = append(right, c.Err.Render(styles.IconOrphan+strconv.Itoa(held.Orphans)))
	}
	if a := Age(orTime(t.Updated, t.Created), s.Now); a != "" {
		right = append(right, c.Dim.Render(a))
	}
	r := strings.Join(right, " ")
	line1 := gutter + icon + " "
	first := Spread(name, r, max(w-Width(line1), 1))
	line1 = Truncate(line1+first, w)
	where := ShortPath(OneLine(t.Cwd), s.Home)
	detail := c.Dim.Render(TruncLeft(where, max(w/2, 10)))
	if t.Model != "" {
		detail += c.Separator() + c.Dim.Render(OneLine(t.Model))
	}
	if per == 1 {
		return []string{line1}
	}
	return []string{line1, Truncate(gutter+"  "+detail, w)}
}

// goneRow is the row under the tasks for perch's messages of sessions
// that are gone: orphans, kept until the user moves or deletes them.
func (c Chrome) goneRow(g Held, w int, s ListScreen) string {
	return Truncate("  "+c.Err.Render(styles.IconOrphan+" "+strconv.Itoa(g.Held)+" orphaned message"+plural(g.Held))+
		c.Dim.Render(" of "+strconv.Itoa(g.Sessions)+" session"+plural(g.Sessions)+" gone · open a session: its held panel ("+
			s.key("to_held", "shift+tab")+") moves them there ("+s.key("held_adopt", "m")+") or takes them back ("+s.key("held_to_composer", "c")+")"), w)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func orTime(a, b time.Time) time.Time {
	if a.IsZero() {
		return b
	}
	return a
}

// centred is rowsH rows with msgs in the middle, dimmed (an empty list's
// word).
func (c Chrome) centred(msgs []string, rowsH, w int) []string {
	out := make([]string, rowsH)
	top := max(rowsH/2-len(msgs)/2, 0)
	for j, m := range msgs {
		if top+j < rowsH {
			out[top+j] = Centre(c.Dim.Render(m), w)
		}
	}
	return out
}

// scrollOffset is the first of n rows to show, rows at a time, so that
// the selected row sel is in view and the view moved as little as it
// could from off.
func scrollOffset(off, sel, rows, n int) int {
	if sel < off {
		off = sel
	}
	if sel >= off+rows {
		off = sel - rows + 1
	}
	return max(min(off, n-rows), 0)
}

// withFlash adds a flash message to a status line's segments; when the
// line is short it goes after the connection, before the counts.
func (c Chrome) withFlash(segs []Segment, flash string, isErr bool) []Segment {
	if flash == "" {
		return segs
	}
	st := c.Flash
	if isErr {
		st = c.FlashErr
	}
	return append(segs, Segment{st.Render(flash), 8})
}
