package board

import (
	"regexp"
	"strings"
)

// A reply's line as a row, perch tasks --all and a notification show it:
// plain text, not its Markdown ("## Summary" is "Summary", "**Done**: see
// [the PR](https://…)" is "Done: see the PR").

var mdLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// listMark is a Markdown line's lead: a heading's #s, a quote's >, a list
// item's bullet or number, a task box.
var listMark = regexp.MustCompile(`^(?:#{1,6}\s+|>\s?|[-*+]\s+(?:\[[ xX]\]\s+)?|\d{1,9}[.)]\s+)`)

// PlainLine is one line of Markdown as plain text: its lead marks, its
// emphasis and code marks gone, its links their text.
func PlainLine(s string) string {
	s = strings.TrimSpace(s)
	for {
		t := listMark.ReplaceAllString(s, "")
		if t == s {
			break
		}
		s = strings.TrimSpace(t)
	}
	s = mdLink.ReplaceAllString(s, "$1")
	s = strings.NewReplacer("**", "", "__", "", "~~", "", "`", "").Replace(s)
	return strings.TrimSpace(s)
}
