package render

import (
	"strconv"
	"strings"

	"charm.land/glamour/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/styles"
	"github.com/perch-tui/perch/styles/mdstyle"
	"github.com/perch-tui/perch/tui/chrome"
)

// Text bounds. A user turn or notice is rarely long, but a pasted log can
// be megabytes; the wrapped view is capped and says so.
const (
	maxTextLines         = 2000
	maxTextLinesExpanded = 20000
	maxNoticeLines       = 6
	// maxMarkdown is the largest assistant text sent through glamour,
	// which runs at ~0.25 MB/s: 64 KB is ~250 ms once.
	// Larger replies are shown as plain wrapped text.
	maxMarkdown = 64 << 10
)

// user draws a user turn: "You" and the wrapped text, set apart from the
// agent by the accent bar in the gutter.
func (r *Renderer) user(it *events.Item, w int, expanded bool) []string {
	limit := maxTextLines
	if expanded {
		limit = maxTextLinesExpanded
	}
	lines := []string{r.st.User.Label.Render("You")}
	body, more := wrapText(it.Body(), w, limit)
	tp := newPaint(r.st.User.Text)
	for _, l := range body {
		lines = append(lines, tp.on(l))
	}
	if more {
		lines = append(lines, r.p.hidden.on(fit("… message cut for display …", w)))
	}
	return lines
}

// assistant draws a reply: the model's reasoning first (unless hidden),
// then the text as markdown, with token usage on a dim line under it. A
// reply without text (a turn of tool calls only, whose items follow) has
// one dim line naming its calls, the usage at its right end when it fits,
// so the turn never renders as nothing.
func (r *Renderer) assistant(it *events.Item, w int, expanded, hideThinking bool) []string {
	var lines []string
	text := strings.TrimSpace(it.Body())
	usage := ""
	if u := it.Usage; u != nil && (u.InputTokens > 0 || u.OutputTokens > 0 || u.HasCost) {
		usage = usageText(u)
	}
	thinking := strings.TrimSpace(it.ThinkingBody())
	if thinking != "" && !hideThinking {
		lines = append(lines, r.thinking(thinking, w, expanded)...)
	}
	switch {
	case text == "" && thinking != "" && len(it.ToolCalls) == 0:
		// Thinking only (so far): nothing more to say, unless hidden.
		if hideThinking {
			lines = append(lines, r.st.Assistant.Usage.Render(fit(thinkingIcon+" thinking hidden", w)))
		}
	case text == "":
		left := fit(callsText(it.ToolCalls), w)
		if gap := w - ansi.StringWidth(left) - ansi.StringWidth(usage); usage != "" && gap >= 2 {
			left += strings.Repeat(" ", gap) + usage
			usage = ""
		}
		lines = append(lines, r.st.Assistant.Usage.Render(left))
	case len(text) > maxMarkdown:
		r.forgetStreams(it) // plain from now on: no prefix to keep
		lines = append(lines, r.plainAssistant(text, w)...)
	default:
		lines = append(lines, r.streamMarkdown(it, sanitize.Text(text), w)...)
	}
	if note := turnNote(it); note != "" {
		lines = append(lines, r.st.Assistant.Usage.Render(fit(note, w)))
	}
	if usage != "" {
		lines = append(lines, rightAlign(r.st.Assistant.Usage.Render(usage), w))
	}
	return lines
}

// turnNote says how a reply ended when that is worth a line: cut by the
// token limit, refused, filtered, or a stream that ended mid-reply.
func turnNote(it *events.Item) string {
	switch {
	case it.Incomplete:
		return "… the stream ended before this reply was finished"
	case it.StopReason == events.StopMaxTokens:
		return "… cut: the model reached its output limit"
	case it.StopReason == events.StopRefusal:
		return "the model refused"
	case it.StopReason == events.StopFiltered:
		return "… cut by the provider's content filter"
	case it.StopReason == events.StopError:
		return "the reply ended with an error"
	}
	return ""
}

// thinkingPreview is how many rows of reasoning a collapsed turn shows.
const thinkingPreview = 3

// thinkingIcon marks reasoning; two cells wide, so the rows under it are
// indented by three.
const (
	thinkingIcon   = "💭"
	thinkingIndent = "   "
)

// thinking draws the model's reasoning apart from its reply, dim, under
// the thinking icon: its first rows (blank lines left out) when the item
// is collapsed, with a line saying how much more there is; all of it when
// expanded.
func (r *Renderer) thinking(text string, w int, expanded bool) []string {
	inner := max(w-len(thinkingIndent), 1)
	if expanded {
		body, cut := wrapText(text, inner, maxTextLinesExpanded)
		out := r.thinkingRows(body, w)
		if cut {
			out = append(out, r.p.hidden.on(fit(thinkingIndent+"… thinking cut for display …", w)))
		}
		return out
	}
	all, cut := wrapText(dropBlankLines(text), inner, maxTextLines)
	body := all[:min(len(all), thinkingPreview)]
	out := r.thinkingRows(body, w)
	more := ""
	switch n := len(all) - len(body); {
	case cut:
		more = "… more, enter expands"
	case n > 0:
		more = "… " + plural(n, "more line") + ", enter expands"
	}
	if more != "" {
		out = append(out, r.p.hidden.on(fit(thinkingIndent+more, w)))
	}
	return out
}

// thinkingRows puts the icon before the first row of reasoning and
// indents the others under it.
func (r *Renderer) thinkingRows(rows []string, w int) []string {
	st := r.st.Assistant.Usage
	out := make([]string, 0, len(rows))
	for i, l := range rows {
		prefix := thinkingIndent
		if i == 0 {
			prefix = thinkingIcon + " "
		}
		out = append(out, st.Render(fit(prefix+l, w)))
	}
	return out
}

// dropBlankLines removes the empty lines between paragraphs: a preview of
// a few rows should show words.
func dropBlankLines(s string) string {
	if !strings.Contains(s, "\n\n") {
		return s
	}
	var b strings.Builder
	for l := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	return b.String()
}

// callsText names the calls of a reply without text: "Calls read_file,
// list_files", the first few of many, or "(empty reply)" for none.
func callsText(calls []events.ToolCall) string {
	if len(calls) == 0 {
		return "(empty reply)"
	}
	const most = 4
	names := make([]string, 0, most+1)
	for i, c := range calls {
		if i == most-1 && len(calls) > most {
			names = append(names, "and "+strconv.Itoa(len(calls)-i)+" more")
			break
		}
		name := sanitize.Line(c.Name)
		if name == "" {
			name = "a tool"
		}
		names = append(names, name)
	}
	return "Calls " + strings.Join(names, ", ")
}

func (r *Renderer) plainAssistant(text string, w int) []string {
	body, more := wrapText(text, w, maxTextLinesExpanded)
	pp := newPaint(r.st.Assistant.Plain)
	for i, l := range body {
		body[i] = pp.on(l)
	}
	if more {
		body = append(body, r.p.hidden.on(fit("… reply cut for display …", w)))
	}
	return body
}

// markdown renders clean text with the memoized glamour renderer for w.
func (r *Renderer) markdown(text string, w int) []string {
	tr := r.md[w]
	if tr == nil {
		var err error
		tr, err = glamour.NewTermRenderer(
			glamour.WithStyles(mdstyle.Config(r.st.Theme)),
			glamour.WithWordWrap(w),
		)
		if err != nil {
			return r.plainAssistant(text, w)
		}
		if len(r.md) >= 8 { // widths seen while dragging a resize
			clear(r.md)
		}
		r.md[w] = tr
	}
	r.stats.MarkdownBytes += len(text)
	out, err := tr.Render(text)
	if err != nil {
		return r.plainAssistant(text, w)
	}
	raw := strings.Split(out, "\n")
	lines := make([]string, 0, len(raw))
	for _, l := range raw {
		lines = append(lines, fitStyled(trimPadded(dropOSC(l)), w))
	}
	// glamour frames the document with blank lines; the transcript adds
	// its own spacing.
	for len(lines) > 0 && blank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && blank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func blank(s string) bool {
	return strings.TrimSpace(ansi.Strip(s)) == ""
}

// usageText is "↑9.2k ↓74 ⟲9.1k cached": input, output and cached tokens.
func usageText(u *events.Usage) string {
	s := styles.IconInput + compact(u.InputTokens) + " " + styles.IconOutput + compact(u.OutputTokens)
	if u.CachedTokens > 0 {
		s += " " + styles.IconCached + compact(u.CachedTokens) + " cached"
	}
	if u.HasCost && u.CostUSD > 0 {
		s += " " + events.CostText(u.CostUSD)
	}
	return s
}

// compact formats a token count as every view does (chrome.Tokens).
func compact(n int64) string { return chrome.Tokens(n) }

// notice draws an info/warning/error line with its icon; continuation
// lines are indented under the text.
func (r *Renderer) notice(it *events.Item, w int, expanded bool) []string {
	st, icon := r.st.Notice.Info, styles.IconInfo
	switch it.Level {
	case events.LevelWarning:
		st, icon = r.st.Notice.Warning, styles.IconWarning
	case events.LevelError:
		st, icon = r.st.Notice.Error, styles.IconNotice
	}
	limit := maxNoticeLines
	if expanded {
		limit = maxTextLines
	}
	body, more := wrapText(strings.TrimSpace(it.Text), max(w-2, 1), limit)
	if len(body) == 0 {
		body = []string{""}
	}
	p := newPaint(st)
	lines := make([]string, 0, len(body)+1)
	for i, l := range body {
		prefix := "  "
		if i == 0 {
			prefix = icon + " "
		}
		lines = append(lines, fitStyled(p.on(prefix+l), w))
	}
	if more {
		lines = append(lines, r.p.hidden.on(fit("  …", w)))
	}
	return lines
}

// dropOSC removes the OSC 8 hyperlinks glamour wraps links in. The URL is
// printed next to the link text anyway; the hyperlink would let a model
// make text point somewhere else than it says, and glamour gives each one
// a random id, which would make renders non-deterministic.
func dropOSC(s string) string {
	if !strings.Contains(s, "\x1b]") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "\x1b]")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		end := strings.IndexAny(rest, "\a\x1b")
		switch {
		case end < 0:
			return b.String()
		case rest[end] == '\a':
			s = rest[end+1:]
		case strings.HasPrefix(rest[end:], "\x1b\\"):
			s = rest[end+2:]
		default:
			s = rest[end:]
		}
	}
}
