package sanitize

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// stackRecipe is the multi-pass sanitizing recipe perch first used, kept as a benchmark
// baseline for Text.
func stackRecipe(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = ansi.Strip(s)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return -1
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return -1
		}
		return r
	}, s)
}
