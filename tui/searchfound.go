package tui

import (
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/tui/render"
)

// foundText says what a committed search found: "3 matches in 2 items",
// "1 match in 1 item".
func (m *Model) foundText() string {
	f, n := m.search.found, m.search.matches
	if f < n {
		f = n // an item counts one match at least
	}
	return itoa(f) + " match" + pluralES(f) + " in " + itoa(n) + " item" + plural(n)
}

func pluralES(n int) string {
	if n == 1 {
		return ""
	}
	return "es"
}

// hiddenMatch says whether query is in a part of it that the collapsed
// item does not show: a tool's output (its header line shows its name
// and argument whole).
func (m *Model) hiddenMatch(it *events.Item, query string) bool {
	if it == nil || it.Kind != events.ItemTool || it.Tool == nil {
		return false
	}
	return !render.HeaderContains(it.Tool, query)
}

// nouns is n and the noun, singular or plural as n says ("1 text",
// "2 texts"; never "text(s)").
func nouns(n int, noun string) string { return itoa(n) + " " + noun + plural(n) }

// pick is a when cond holds, else b.
func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}
