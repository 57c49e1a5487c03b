package tools

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

var readHead = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^File: (.*) \(lines (\d+)-(\d+) \(\d+ lines\)\)$`)
})

// ParseRead reads maria's read_file text (FormatRead): a "File: p (lines
// s-e (n lines))" header over " L12 | text" rows. The rows are kept as they
// are in the text (Numbered): stripping them would copy the whole output.
// nil when the text is not of this format.
func ParseRead(text string) *FileContent {
	first, body, _ := strings.Cut(text, "\n")
	m := readHead().FindStringSubmatch(first)
	if m == nil {
		return nil
	}
	f := &FileContent{Path: m[1], Content: body, Numbered: true}
	f.StartLine, _ = strconv.Atoi(m[2])
	f.EndLine, _ = strconv.Atoi(m[3])
	return f
}

// StripRow removes the " L12 | " prefix of one read_file row; a line
// without one is returned as is.
func StripRow(l string) string {
	t := strings.TrimLeft(l, " ")
	if strings.HasPrefix(t, "L") {
		if bar := strings.Index(t, " | "); bar > 1 && isDigits(t[1:bar]) {
			return t[bar+3:]
		} else if strings.HasSuffix(t, " |") && isDigits(t[1:len(t)-2]) {
			return ""
		}
	}
	return l
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
