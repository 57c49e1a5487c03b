package tui

import (
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/tui/chrome"
)

// Small ANSI-aware layout helpers. Every line the UI emits goes through fit
// or truncate so that no line is ever wider than the terminal (wide runes and
// escape sequences included).

func itoa(n int) string { return strconv.Itoa(n) }

// lineWidth is the display width of s in cells (escape sequences excluded).
func lineWidth(s string) int { return chrome.Width(s) }

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// oneLine makes daemon text terminal-safe and collapses whitespace runs
// (newlines included) into single spaces, for one-line previews. Only the
// first previewMax bytes are read: texts are kept whole, and a preview of a
// pasted log must not cost its megabytes on every frame.
func oneLine(s string) string { return chrome.OneLine(s) }

// previewMax is the most of a text any preview reads.
const previewMax = chrome.PreviewMax

// cutText is s cut to at most n bytes on a rune boundary.
func cutText(s string, n int) string { return chrome.CutText(s, n) }

// truncate cuts s to at most w cells, ending in "…" when cut.
func truncate(s string, w int) string { return chrome.Truncate(s, w) }

// fit truncates s to w cells and pads it with spaces to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = truncate(s, w)
	if n := ansi.StringWidth(s); n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// spread puts left and right on one line of w cells, truncating left first
// so the right part (usually a short badge) stays visible.
func spread(left, right string, w int) string { return chrome.Spread(left, right, w) }

// joinFit joins segments with sep, dropping trailing segments that do not
// fit in w cells (segments are given most important first).
func joinFit(segs []string, sep string, w int) string {
	var b strings.Builder
	used := 0
	sw := ansi.StringWidth(sep)
	for _, s := range segs {
		if s == "" {
			continue
		}
		sw2 := ansi.StringWidth(s)
		add := sw2
		if used > 0 {
			add += sw
		}
		if used+add > w {
			if used == 0 {
				return truncate(s, w)
			}
			break
		}
		if used > 0 {
			b.WriteString(sep)
		}
		b.WriteString(s)
		used += add
	}
	return b.String()
}

// shortPath replaces a home prefix with "~".
func shortPath(p, home string) string { return chrome.ShortPath(p, home) }

// truncLeft keeps the end of a path, which is the informative part.
func truncLeft(s string, w int) string { return chrome.TruncLeft(s, w) }

// humanDuration is a compact elapsed time: 9s, 1m05s, 2h03m.
func humanDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int(d / time.Second)
	switch {
	case s < 60:
		return itoa(s) + "s"
	case s < 3600:
		return itoa(s/60) + "m" + pad2(s%60) + "s"
	default:
		return itoa(s/3600) + "h" + pad2(s/60%60) + "m"
	}
}

// age is a compact "how long ago": now, 5m, 3h, 2d.
func age(t, now time.Time) string { return chrome.Age(t, now) }

func pad2(n int) string {
	if n < 10 {
		return "0" + itoa(n)
	}
	return itoa(n)
}

// tokens is a token count as every view writes it (chrome.Tokens).
func tokens(n int64) string { return chrome.Tokens(n) }

// spinnerFrame is frame i of the spinner that animates generating runs and
// running tools (every frame is one 3-byte braille rune).
func spinnerFrame(i int) string { return chrome.SpinnerFrame(i) }
