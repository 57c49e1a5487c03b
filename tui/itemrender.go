package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
)

// itemOpts is how one transcript item should be drawn.
type itemOpts struct {
	Width    int
	Expanded bool
	Selected bool
	Spinner  string
}

// itemRenderer draws transcript items. The real one is tui/render (cached
// per item version and width); the transcript only relies on this small
// surface, so tests and benchmarks can count calls.
type itemRenderer interface {
	// Item returns the item's lines, each at most o.Width cells wide. The
	// result is owned by the renderer's cache: callers must not modify it.
	Item(it *events.Item, o itemOpts) []string
	// PlainText is the item's text for copy and search.
	PlainText(it *events.Item) string
	// Highlight marks case-insensitive matches of query in a rendered line.
	Highlight(line, query string) string
}

// plainRenderer is the built-in renderer used until tui/render is wired
// in, and the NO_COLOR-safe reference in tests. It caches like the real one:
// per item, keyed by version, width and flags.
type plainRenderer struct {
	ch    chrome
	cache map[*events.Item]plainEntry
}

type plainEntry struct {
	version uint64
	opts    itemOpts
	lines   []string
}

func newPlainRenderer(ch chrome) *plainRenderer {
	return &plainRenderer{ch: ch, cache: make(map[*events.Item]plainEntry)}
}

const collapsedToolLines = 6

func (r *plainRenderer) Item(it *events.Item, o itemOpts) []string {
	if o.Width < 1 {
		o.Width = 1
	}
	if e, ok := r.cache[it]; ok && e.version == it.Version && e.opts == o {
		return e.lines
	}
	lines := r.render(it, o)
	r.cache[it] = plainEntry{version: it.Version, opts: o, lines: lines}
	return lines
}

func (r *plainRenderer) render(it *events.Item, o itemOpts) []string {
	w := o.Width
	gutter := "  "
	if o.Selected {
		gutter = r.ch.SelectedGutter.Render("▌") + " "
	}
	inner := max(w-2, 1)
	var head string
	var body string
	limit := 0
	switch it.Kind {
	case events.ItemUser:
		head = r.ch.st.User.Label.Render("you")
		body = it.Text
	case events.ItemAssistant:
		head = r.ch.Title.Render("assistant")
		body = it.Text
	case events.ItemTool:
		name, status, arg := "tool", events.ToolRunning, ""
		if it.Tool != nil {
			name, status, arg = it.Tool.Name, it.Tool.Status, it.Tool.KeyArg()
			if it.Tool.Result != nil {
				body = it.Tool.Result.Text
				if it.Tool.Result.IsError && it.Tool.Result.ErrorText != "" {
					body = it.Tool.Result.ErrorText
				}
			}
		}
		icon := r.ch.OK.Render("✓")
		switch status {
		case events.ToolRunning:
			icon = r.ch.Accent.Render(orString(o.Spinner, "●"))
		case events.ToolError:
			icon = r.ch.Err.Render("×")
		case events.ToolCancelled, events.ToolUnknown:
			icon = r.ch.Dim.Render("○")
		}
		head = icon + " " + r.ch.Bold.Render(name)
		if arg != "" {
			head += " " + r.ch.Dim.Render(arg)
		}
		if !o.Expanded {
			limit = collapsedToolLines
		}
	default:
		st := r.ch.Dim
		switch it.Level {
		case events.LevelWarning:
			st = r.ch.Warn
		case events.LevelError:
			st = r.ch.Err
		}
		head = st.Render("• " + firstLine(it.Text))
		if i := strings.IndexByte(it.Text, '\n'); i >= 0 {
			body = it.Text[i+1:]
		}
	}
	out := []string{gutter + ansi.Truncate(head, inner, "…")}
	if body = strings.TrimRight(body, "\n"); body != "" {
		wrapped := strings.Split(ansi.Wrap(sanitizeLine(body), inner, ""), "\n")
		hidden := 0
		if limit > 0 && len(wrapped) > limit {
			hidden = len(wrapped) - limit
			wrapped = wrapped[:limit]
		}
		for _, l := range wrapped {
			out = append(out, gutter+ansi.Truncate(l, inner, ""))
		}
		if hidden > 0 {
			out = append(out, gutter+r.ch.Dim.Render(ansi.Truncate(
				"… "+itoa(hidden)+" more lines (enter to expand)", inner, "…")))
		}
	}
	return out
}

func (r *plainRenderer) PlainText(it *events.Item) string {
	if it.Kind == events.ItemTool && it.Tool != nil {
		var b strings.Builder
		b.WriteString(it.Tool.Name)
		if a := it.Tool.KeyArg(); a != "" {
			b.WriteString(" ")
			b.WriteString(a)
		}
		if it.Tool.Result != nil {
			b.WriteString("\n")
			b.WriteString(it.Tool.Result.Text)
		}
		return b.String()
	}
	return it.Text
}

func (r *plainRenderer) Highlight(line, query string) string {
	return highlightPlain(line, query, r.ch.Match)
}

// highlightPlain marks matches on the stripped text. It drops the line's
// own styling when (and only when) it has a match: matches must stand out.
func highlightPlain(line, query string, st lipgloss.Style) string {
	if query == "" {
		return line
	}
	plain := ansi.Strip(line)
	lp, lq := strings.ToLower(plain), strings.ToLower(query)
	if len(lp) != len(plain) || !strings.Contains(lp, lq) {
		return line
	}
	var b strings.Builder
	for {
		i := strings.Index(lp, lq)
		if i < 0 {
			b.WriteString(plain)
			break
		}
		b.WriteString(plain[:i])
		b.WriteString(st.Render(plain[i : i+len(lq)]))
		plain, lp = plain[i+len(lq):], lp[i+len(lq):]
	}
	return b.String()
}

// sanitizeLine removes control sequences that would break the layout
// (tool output is arbitrary bytes) and expands tabs.
func sanitizeLine(s string) string {
	s = ansi.Strip(s)
	s = strings.ReplaceAll(s, "\t", "    ")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}
