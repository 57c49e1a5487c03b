package tools

import (
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The regexps ParseSearch was written with; searchReference is that
// first version, kept to check the hand-written one against.
var (
	searchHitRE   = regexp.MustCompile(`^(.+):(\d+)$`)
	searchTotalRE = regexp.MustCompile(`Found (\d+) matches`)
)

func searchReference(text string) *SearchResult {
	msg, body, _ := strings.Cut(text, "\n\n")
	s := &SearchResult{Message: msg}
	if m := searchTotalRE.FindStringSubmatch(msg); m != nil {
		s.Total, _ = strconv.Atoi(m[1])
	}
	var cur *SearchHit
	for _, line := range strings.Split(body, "\n") {
		if m := searchHitRE.FindStringSubmatch(line); m != nil && !ctxLine(line) {
			n, _ := strconv.Atoi(m[2])
			s.Hits = append(s.Hits, SearchHit{Path: m[1], Line: n})
			cur = &s.Hits[len(s.Hits)-1]
			continue
		}
		if cur != nil && line != "" {
			if cur.Context != "" {
				cur.Context += "\n"
			}
			cur.Context += line
		}
	}
	return s
}

// FuzzSearchText: ParseSearch reads any text as its regexp version
// did.
func FuzzSearchText(f *testing.F) {
	for _, s := range []string{
		"Search completed. Found 3 matches.\n\nsrc/a.go:12\n10: x\n11: y\n\nsrc/b.go:3\n3: z",
		"Found 1 matches\n\na:1:2\n1: q\n\n\n2: r\nb::7\nc:\n:5\nx:99999999999999999999999",
		"Found x matches, Found 12 matches\n\n\xff:1\n\xff\n12: \r\n",
		"no blank line Found 4 matches",
		"Found 007 matches\n\n9:9\n",
		"\n\nonly:1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, want := ParseSearch(text), searchReference(text)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseSearch(%q)\n got %+v\nwant %+v", text, got, want)
		}
	})
}
