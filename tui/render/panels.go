package render

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/styles"
)

// TodoPanel draws the agent's todo list: a header with counts, then one
// row per item (status icon, priority, content), completed items struck
// through and dimmed, notes on a dim line below. Every line fits width.
func TodoPanel(todos []events.Todo, width int, st *styles.Styles) []string {
	if width <= 0 || st == nil {
		return nil
	}
	done, active := 0, 0
	for _, t := range todos {
		switch t.Status {
		case "completed":
			done++
		case "in_progress", "in-progress":
			active++
		}
	}
	head := st.Todo.Header.Render("Todos") + " " +
		st.Todo.Count.Render(fmt.Sprintf("%d/%d done", done, len(todos)))
	if active > 0 {
		head += st.Todo.Count.Render(fmt.Sprintf(" · %d in progress", active))
	}
	lines := []string{fitStyled(head, width)}
	for _, t := range todos {
		var icon, text string
		content := sanitize.Line(t.Content)
		switch t.Status {
		case "completed":
			icon = st.Todo.Completed.Render(styles.IconTodoCompleted)
			text = st.Todo.Done.Render(fit(content, max(width-4, 1)))
		case "in_progress", "in-progress":
			icon = st.Todo.InProgress.Render(styles.IconTodoInProgress)
			text = st.Todo.InProgress.Render(fit(content, max(width-4, 1)))
		default:
			icon = st.Todo.Pending.Render(styles.IconTodoPending)
			text = st.Todo.Text.Render(fit(content, max(width-4, 1)))
		}
		var prio string
		switch t.Priority {
		case "high":
			prio = st.Todo.High.Render(styles.IconPriorityHigh)
		case "low":
			prio = st.Todo.Low.Render(styles.IconPriorityLow)
		default:
			prio = st.Todo.Medium.Render(styles.IconPriorityMedium)
		}
		lines = append(lines, fitStyled(icon+" "+prio+" "+text, width))
		if n := strings.TrimSpace(t.Notes); n != "" && t.Status != "completed" {
			lines = append(lines, fitStyled("    "+st.Todo.Notes.Render(fit("↳ "+sanitize.Line(n), max(width-4, 1))), width))
		}
	}
	return lines
}

// HighlightLine returns line without its styling, with every
// case-insensitive occurrence of query styled by st. Matching runs on the
// visible text, so escape codes never match or split a match. An empty
// query or no match gives the plain line.
func HighlightLine(line, query string, st lipgloss.Style) string {
	plain := ansi.Strip(line)
	if query == "" {
		return plain
	}
	spans := findFold(plain, query)
	if len(spans) == 0 {
		return plain
	}
	return paintSpans(plain, spans, newPaint(st))
}

// Highlighter marks search matches in rendered lines with one style,
// reduced once to its escape codes (lipgloss renders cost more than the
// rest of a highlighted frame together).
type Highlighter struct{ p paint }

// NewHighlighter returns a Highlighter drawing matches with st.
func NewHighlighter(st lipgloss.Style) Highlighter { return Highlighter{newPaint(st)} }

// Line is HighlightLine for lines that may not match: a line without a
// match is returned as it is, colours and all.
func (h Highlighter) Line(line, query string) string {
	if query == "" {
		return line
	}
	plain := ansi.Strip(line)
	spans := findFold(plain, query)
	if len(spans) == 0 {
		return line
	}
	return paintSpans(plain, spans, h.p)
}

func paintSpans(plain string, spans [][2]int, p paint) string {
	var b strings.Builder
	last := 0
	for _, s := range spans {
		b.WriteString(plain[last:s[0]])
		b.WriteString(p.on(plain[s[0]:s[1]]))
		last = s[1]
	}
	b.WriteString(plain[last:])
	return b.String()
}

// Match finds the byte spans of case-insensitive, non-overlapping
// occurrences of query in plain (clean) text, for search navigation.
func Match(plain, query string) [][2]int {
	if query == "" {
		return nil
	}
	return findFold(plain, query)
}

func findFold(s, q string) [][2]int {
	var spans [][2]int
	if isASCII(s) && isASCII(q) {
		// Lowercasing ASCII keeps byte offsets, so Index can do the work.
		ls, lq := strings.ToLower(s), strings.ToLower(q)
		for off := 0; off <= len(ls)-len(lq); {
			i := strings.Index(ls[off:], lq)
			if i < 0 {
				break
			}
			spans = append(spans, [2]int{off + i, off + i + len(lq)})
			off += i + len(lq)
		}
		return spans
	}
	// General case: compare rune by rune with simple case folding, which
	// never changes where a match starts or ends in s.
	for i := 0; i < len(s); {
		if end, ok := hasPrefixFold(s[i:], q); ok {
			spans = append(spans, [2]int{i, i + end})
			i += max(end, 1)
			continue
		}
		_, sz := utf8.DecodeRuneInString(s[i:])
		i += sz
	}
	return spans
}

// hasPrefixFold reports whether s starts with q under simple case folding,
// and the byte length of the matched prefix of s.
func hasPrefixFold(s, q string) (int, bool) {
	i := 0
	for _, qr := range q {
		if i >= len(s) {
			return 0, false
		}
		sr, sz := utf8.DecodeRuneInString(s[i:])
		if sr != qr && !equalFold(sr, qr) {
			return 0, false
		}
		i += sz
	}
	return i, true
}

func equalFold(a, b rune) bool {
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// maxPlain bounds the text PlainText gives of one item: the timeline keeps
// outputs whole (tens of megabytes), which no clipboard takes and no
// keystroke of a search should rescan.
const maxPlain = 1 << 20

// PlainText is an item as text without styling: what transcript search
// scans (copying takes CopyText). Tool items give the name
// and key argument on the first line, then the output. A text longer than
// maxPlain keeps its head and tail around a marker.
func PlainText(it *events.Item) string {
	if it == nil {
		return ""
	}
	if it.Kind != events.ItemTool || it.Tool == nil {
		return sanitize.Text(headTail(it.Body(), maxPlain))
	}
	t := it.Tool
	var b strings.Builder
	b.WriteString(sanitize.Line(toolName(t)))
	if k := keyArg(t); k != "" {
		b.WriteString(" ")
		b.WriteString(k)
	}
	if res := t.Output(); res != nil {
		out := res.Text
		switch {
		case res.IsError && res.ErrorText != "":
			out = res.ErrorText
		case out == "" && res.Command != nil:
			out = res.Command.Stdout
			if res.Command.Stderr != "" {
				out += "\n" + res.Command.Stderr
			}
		case out == "" && res.File != nil:
			out = res.File.Plain()
		}
		if out = trimTrailingNewlines(out); out != "" {
			b.WriteString("\n")
			b.WriteString(sanitize.Text(headTail(out, maxPlain)))
		}
	}
	return b.String()
}

// headTail keeps at most n bytes of s: three quarters from its head, the
// rest from its tail, cut on rune boundaries, with a marker between that
// says how much was left out.
func headTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := cutBytes(s, n*3/4), s[len(s)-n/4:]
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return head + fmt.Sprintf("\n… %d bytes not shown …\n", len(s)-len(head)-len(tail)) + tail
}
