package tools

import (
	"strconv"
	"strings"
)

// ParseSearch reads maria's search_files text (FormatSearch): a message,
// then "path:line" headers each followed by "n: text" context rows. By
// hand: the regexps it was written with (searchHitRE, searchTotalRE in the
// tests, which check that both agree) cost more than the rest of decoding
// a search.
func ParseSearch(text string) *SearchResult {
	msg, body, _ := strings.Cut(text, "\n\n")
	s := &SearchResult{Message: msg}
	s.Total, _ = FoundMatches(msg)
	cur := -1
	// The context lines of hit cur: body[from:to] while they follow each
	// other (the context is then that part of the text, not a copy),
	// else ctx.
	var ctx []string
	from, to := -1, -1
	end := func() {
		switch {
		case cur < 0:
		case ctx != nil:
			s.Hits[cur].Context = strings.Join(ctx, "\n")
		case from >= 0:
			s.Hits[cur].Context = body[from:to]
		}
		ctx, from, to = nil, -1, -1
	}
	for at := 0; at <= len(body); {
		line := body[at:]
		next := len(body) + 1
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], at+i+1
		}
		if path, n, ok := searchHit(line); ok && !ctxLine(line) {
			end()
			line, _ := strconv.Atoi(n)
			s.Hits = append(s.Hits, SearchHit{Path: path, Line: line})
			cur = len(s.Hits) - 1
		} else if cur >= 0 && line != "" {
			switch {
			case ctx != nil:
				ctx = append(ctx, line)
			case from < 0:
				from, to = at, at+len(line)
			case to+1 == at:
				to = at + len(line)
			default:
				ctx = append(strings.Split(body[from:to], "\n"), line)
			}
		}
		at = next
	}
	end()
	return s
}

// IsSearchHit says whether one line of a FormatSearch text is a
// "path:line" hit header.
func IsSearchHit(line string) bool {
	_, _, ok := searchHit(line)
	return ok && !ctxLine(line)
}

// searchHit matches ^(.+):(\d+)$ (line has no newline): the line ends in
// ASCII digits right after a colon that is not its first byte.
func searchHit(line string) (path, n string, ok bool) {
	j := len(line)
	for j > 0 && line[j-1] >= '0' && line[j-1] <= '9' {
		j--
	}
	if j == len(line) || j < 2 || line[j-1] != ':' {
		return "", "", false
	}
	return line[:j-1], line[j:], true
}

// FoundMatches reads the leftmost "Found <n> matches" in msg, a search's
// count of its matches.
func FoundMatches(msg string) (int, bool) {
	for from := 0; ; {
		i := strings.Index(msg[from:], "Found ")
		if i < 0 {
			return 0, false
		}
		start := from + i + len("Found ")
		j := start
		for j < len(msg) && msg[j] >= '0' && msg[j] <= '9' {
			j++
		}
		if j > start && strings.HasPrefix(msg[j:], " matches") {
			n, _ := strconv.Atoi(msg[start:j])
			return n, true
		}
		from += i + 1
	}
}

// ContextRow reads a "12: text" context row of a FormatSearch text: its
// line number and the length of its "12: " prefix.
func ContextRow(line string) (n, prefix int, ok bool) {
	if !ctxLine(line) {
		return 0, 0, false
	}
	i := strings.Index(line, ": ")
	n, _ = strconv.Atoi(line[:i])
	return n, i + 2, true
}

// ctxLine: "12: text" is a context row, not a "path:12" header.
func ctxLine(line string) bool {
	i := strings.Index(line, ": ")
	return i > 0 && isDigits(line[:i])
}
