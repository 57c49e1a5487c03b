package cli

import "strings"

// didYouMean is " (did you mean X?)" for the option nearest to word, or
// "" when none is near: within two edits (a swap of neighbours counts as
// one), fewer than word's length, or the one option word begins.
func didYouMean(word string, options []string) string {
	// Another name for an option (markdown for md) is the surest guess.
	if o, ok := synonyms[strings.ToLower(word)]; ok {
		for _, opt := range options {
			if opt == o {
				return " (did you mean " + o + "?)"
			}
		}
	}
	best, bestD := "", 3
	for _, o := range options {
		if d := editDistance(strings.ToLower(word), strings.ToLower(o)); d < bestD && d < len(word) {
			best, bestD = o, d
		}
	}
	if best == "" && len(word) >= 2 {
		for _, o := range options {
			if strings.HasPrefix(o, word) {
				if best != "" {
					return "" // more than one: no guess
				}
				best = o
			}
		}
	}
	if best == "" || best == word {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// synonyms are other names people give perch's option values.
var synonyms = map[string]string{
	"markdown": "md", "mdown": "md", "ndjson": "jsonl", "jsonlines": "jsonl", "json-lines": "jsonl",
	"txt": "text", "plain": "text", "on": "true", "off": "false",
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of adjacent runes.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// d[i][j] is the distance of x[:i] and y[:j]; three rows suffice.
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}
