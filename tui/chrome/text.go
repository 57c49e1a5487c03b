package chrome

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/sanitize"
)

// Small ANSI-aware layout helpers. Every line the UI emits goes through
// Truncate (or a helper built on it) so that no line is ever wider than the
// terminal (wide runes and escape sequences included).

// Width is the display width of s in cells (escape sequences excluded).
func Width(s string) int { return ansi.StringWidth(s) }

// OneLine makes untrusted text terminal-safe and collapses whitespace runs
// (newlines included) into single spaces, for one-line previews. Only the
// first PreviewMax bytes are read: texts are kept whole, and a preview of a
// pasted log must not cost its megabytes on every frame.
func OneLine(s string) string {
	return strings.Join(strings.Fields(sanitize.Text(CutText(s, PreviewMax))), " ")
}

// PreviewMax is the most of a text any preview reads.
const PreviewMax = 64 << 10

// CutText is s cut to at most n bytes on a rune boundary.
func CutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Truncate cuts s to at most w cells, ending in "…" when cut.
func Truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// Spread puts left and right on one line of w cells, truncating left first
// so the right part (usually a short badge) stays visible.
func Spread(left, right string, w int) string {
	rw := ansi.StringWidth(right)
	if rw >= w {
		return Truncate(right, w)
	}
	left = Truncate(left, w-rw-1)
	gap := w - ansi.StringWidth(left) - rw
	return left + strings.Repeat(" ", max(gap, 1)) + right
}

// Centre pads s on the left to centre it in w cells.
func Centre(s string, w int) string {
	s = Truncate(s, w)
	pad := (w - Width(s)) / 2
	if pad <= 0 {
		return s
	}
	return strings.Repeat(" ", pad) + s
}

// ShortPath replaces a home prefix with "~".
func ShortPath(p, home string) string {
	if home != "" && home != "/" && strings.HasPrefix(p, home) {
		rest := p[len(home):]
		if rest == "" || rest[0] == '/' {
			return "~" + rest
		}
	}
	return p
}

// TruncLeft keeps the end of a path, which is the informative part.
func TruncLeft(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.TruncateLeft(s, ansi.StringWidth(s)-w+1, "…")
}

// Age is a compact "how long ago": now, 5m, 3h, 2d.
func Age(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	default:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
}

// ShortID is the first block of a UUID, enough to tell tasks apart.
func ShortID(id string) string {
	if i := strings.IndexByte(id, '-'); i > 0 {
		return id[:i]
	}
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// SpinnerFrame is frame i of the spinner that animates generating runs and
// running tools (every frame is one 3-byte braille rune).
func SpinnerFrame(i int) string {
	const frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
	i %= len(frames) / 3
	return frames[i*3 : i*3+3]
}

// Segment is one piece of a status row; the lowest priority goes first
// when the row does not fit.
type Segment struct {
	Text string
	Prio int // higher stays longer
}

// LayoutSegments joins segments in order with a separator, dropping the
// least important until the line fits in w cells.
func LayoutSegments(segs []Segment, sep string, w int) string {
	live := make([]bool, len(segs))
	total := 0
	count := 0
	for i, s := range segs {
		if s.Text != "" {
			live[i] = true
			total += Width(s.Text)
			count++
		}
	}
	sw := Width(sep)
	for count > 1 && total+(count-1)*sw > w {
		drop := -1
		for i, s := range segs {
			if live[i] && (drop < 0 || s.Prio < segs[drop].Prio) {
				drop = i
			}
		}
		live[drop] = false
		total -= Width(segs[drop].Text)
		count--
	}
	var b strings.Builder
	first := true
	for i, s := range segs {
		if !live[i] {
			continue
		}
		if !first {
			b.WriteString(sep)
		}
		first = false
		b.WriteString(s.Text)
	}
	return Truncate(b.String(), w)
}

// Styled renders s, or nothing at all when s is empty (an empty styled
// string still carries escape codes, which would make a segment "present").
func Styled(st lipgloss.Style, s string) string {
	if s == "" {
		return ""
	}
	return st.Render(s)
}

// WrapLines wraps s (lines separated by "\n") to w cells, at spaces and
// slashes where it can and inside a word that is longer than a line: a
// long error is shown whole, its reason (at its end) included.
func WrapLines(s string, w int) []string {
	return strings.Split(ansi.Wrap(s, max(w, 1), " /"), "\n")
}
