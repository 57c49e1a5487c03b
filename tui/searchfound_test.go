package tui

import (
	"fmt"
	"strings"
	"testing"
)

// A search says how many matches it found and in how many items, singular
// and plural right.
func TestSearchCountsMatches(t *testing.T) {
	for _, tc := range []struct {
		texts []string
		want  string
	}{
		{[]string{"a needle", "no", "needle and needle"}, "3 matches in 2 items"},
		{[]string{"a needle", "no"}, "1 match in 1 item"},
		{[]string{"needle, needle"}, "2 matches in 1 item"},
	} {
		hs := attached(t, 100, 24)
		for i, s := range tc.texts {
			hs.events(assistant(fmt.Sprintf("a%d", i), s))
		}
		hs.key("tab")
		hs.key("g")
		hs.key("/")
		hs.typ("needle")
		hs.key("enter")
		hs.contains(tc.want)
	}
}

// The selected match is visible: a match in the part of a tool's output
// that the collapsed item hides opens the item at the match.
func TestSearchOpensTheHiddenMatch(t *testing.T) {
	hs := attached(t, 100, 30)
	var out []string
	for i := range 200 {
		out = append(out, fmt.Sprintf("line %d", i))
	}
	out[120] = "line 120 has the needle"
	hs.events(user("u1", "read it"), preTool("p1", "c1", "read_file", `{"path":"big.txt"}`),
		postTool("q1", "c1", "read_file", strings.Join(out, "\n"), false), assistant("a1", "done"))
	hs.key("tab")
	hs.key("g")
	hs.key("/")
	hs.typ("needle")
	hs.key("enter")
	hs.contains("line 120 has the needle")
	hs.contains("1 match in 1 item")
}
