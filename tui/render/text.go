package render

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/styles"
	"github.com/perch-tui/perch/tui/chrome"
)

// paint is a style reduced to its SGR prefix and suffix. lipgloss's Render
// measures and re-parses its input on every call, which dominates when
// styling thousands of output lines; for a style that only sets colours and
// attributes, prefix+s+suffix is the same bytes at a fraction of the cost.
type paint struct{ pre, post string }

func newPaint(st lipgloss.Style) paint {
	const mark = "\uE000" // private use: never altered by lipgloss
	s := st.Render(mark)
	i := strings.Index(s, mark)
	if i < 0 {
		return paint{}
	}
	return paint{pre: s[:i], post: s[i+len(mark):]}
}

func (p paint) on(s string) string {
	if p.pre == "" || s == "" {
		return s
	}
	return p.pre + s + p.post
}

// paints are the styles used on hot paths, precomputed per theme.
type paints struct {
	selBar, userBar string

	output, errText, stderr, hidden, label, lineNo, border paint
	path, dir, file, symlink, tag, subtle, dim             paint
	add, del, hunk, diffHeader, context                    paint
	rail                                                   string
}

func newPaints(st *styles.Styles) paints {
	return paints{
		selBar:     st.Selected.Render(styles.BorderSelected) + " ",
		userBar:    st.User.Bar.Render(styles.BorderThick) + " ",
		output:     newPaint(st.Tool.Output),
		errText:    newPaint(st.Tool.ErrorText),
		stderr:     newPaint(st.Tool.Stderr),
		hidden:     newPaint(st.Tool.Hidden),
		label:      newPaint(st.Tool.Label),
		lineNo:     newPaint(st.Tool.LineNo),
		border:     newPaint(st.Tool.Border),
		path:       newPaint(st.Tool.Path),
		dir:        newPaint(st.Tool.Dir),
		file:       newPaint(st.Tool.File),
		symlink:    newPaint(st.Tool.Symlink),
		tag:        newPaint(st.Tool.Tag),
		subtle:     newPaint(st.Subtle),
		dim:        newPaint(st.Dim),
		add:        newPaint(st.Diff.Add),
		del:        newPaint(st.Diff.Del),
		hunk:       newPaint(st.Diff.Hunk),
		diffHeader: newPaint(st.Diff.Header),
		context:    newPaint(st.Diff.Context),
		rail:       st.Tool.Border.Render(styles.BorderThin) + " ",
	}
}

// maxRawLine bounds how much of one raw line is sanitized: a 2 MB line
// shows at most a screen width of it, and ansi.Truncate walks its whole
// input (1.5 s for 2 MB, measured), so long lines are cut by bytes first.
const maxRawLine = 64 << 10

// cutBytes cuts s to at most n bytes on a rune boundary.
func cutBytes(s string, n int) string { return chrome.CutText(s, n) }

// fit truncates clean, unstyled text to w cells with an ellipsis.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	// Display width never exceeds byte length (wide runes take 3+ bytes),
	// so short strings need no measuring at all.
	if len(s) <= w {
		return s
	}
	// Eight bytes a cell covers any realistic text; cutting first keeps
	// ansi.Truncate's cost proportional to the width, not the line.
	s = cutBytes(s, w*8+16)
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, styles.Ellipsis)
}

// fitStyled truncates a short line that may already hold SGR sequences.
func fitStyled(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if len(s) <= w || ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, styles.Ellipsis)
}

// cleanLine sanitizes one raw line (no newlines), bounded in size.
func cleanLine(raw string) string {
	return sanitize.Text(cutBytes(raw, maxRawLine))
}

// wrapText sanitizes s and wraps it to w cells, returning at most maxLines
// lines; more reports whether text was left out. Paragraphs are wrapped one
// at a time and each is cut by bytes to what the remaining line budget can
// show, so a 2 MB single line costs the same as a screenful.
func wrapText(s string, w, maxLines int) (lines []string, more bool) {
	if w <= 0 {
		return nil, s != ""
	}
	for rest := s; ; {
		var para string
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			para, rest = rest, ""
		} else {
			para, rest = rest[:i], rest[i+1:]
		}
		budget := maxLines - len(lines)
		if budget <= 0 {
			return lines, true
		}
		limit := budget*w*4 + 64
		cut := len(para) > limit
		para = sanitize.Text(cutBytes(para, limit))
		if len(para) <= w {
			lines = append(lines, para)
		} else {
			for _, l := range strings.Split(ansi.Wrap(para, w, ""), "\n") {
				if len(lines) >= maxLines {
					return lines, true
				}
				lines = append(lines, fit(strings.TrimRight(l, " "), w))
			}
		}
		if cut {
			return lines, true
		}
		if i < 0 {
			return lines, false
		}
	}
}

// trimPadded removes the trailing blanks glamour pads every line with, and
// any SGR codes around them; a reset is appended when codes were dropped so
// no style leaks into the next cell.
func trimPadded(s string) string {
	dropped := false
	for {
		t := strings.TrimRight(s, " ")
		if strings.HasSuffix(t, "m") {
			if j := strings.LastIndex(t, "\x1b["); j >= 0 && isSGR(t[j:]) {
				t = t[:j]
				dropped = true
			}
		}
		if t == s {
			break
		}
		s = t
	}
	if dropped && strings.Contains(s, "\x1b[") {
		s += "\x1b[m"
	}
	return s
}

func isSGR(s string) bool {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' || s[len(s)-1] != 'm' {
		return false
	}
	for i := 2; i < len(s)-1; i++ {
		if c := s[i]; (c < '0' || c > '9') && c != ';' && c != ':' {
			return false
		}
	}
	return true
}

// rightAlign places s at the right edge of w cells.
func rightAlign(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw >= w {
		return fitStyled(s, w)
	}
	return strings.Repeat(" ", w-sw) + s
}

// countLines is the number of lines in s after trailing newlines are
// dropped (0 for "").
func countLines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// trimTrailingNewlines drops trailing line breaks (and the CR of CRLF).
func trimTrailingNewlines(s string) string {
	return strings.TrimRight(s, "\r\n")
}

func lipglossColor(hex string) color.Color { return lipgloss.Color(hex) }
