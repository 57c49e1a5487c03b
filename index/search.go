package index

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/perch-tui/perch/sanitize"
)

// Query is a search.
type Query struct {
	// Text is words (all must match), "quoted phrases" and prefix* words.
	Text string
	// Filters: "" / zero is any.
	System, Project string
	Since, Until    time.Time
	Role            string // user, assistant or tool
	Tool            string
	Limit           int // 0 is 50
}

// Hit is one message that matched, newest first.
type Hit struct {
	Session string    `json:"session"`
	System  string    `json:"system"`
	Project string    `json:"project,omitempty"`
	Title   string    `json:"title,omitempty"`
	Path    string    `json:"path"`
	Deleted bool      `json:"source_deleted,omitempty"`
	At      time.Time `json:"time"`
	Role    string    `json:"role"`
	Tool    string    `json:"tool,omitempty"`
	Key     string    `json:"message"`
	// Snippet is the text around the match, sanitized for a terminal, in
	// parts; the parts with Match set are what the query matched.
	Snippet []Part `json:"snippet"`
}

// Part is a piece of a snippet.
type Part struct {
	Text  string `json:"text"`
	Match bool   `json:"match,omitempty"`
}

// SnippetText is the snippet as one line, the matches unmarked.
func (h Hit) SnippetText() string {
	var b strings.Builder
	for _, p := range h.Snippet {
		b.WriteString(p.Text)
	}
	return b.String()
}

// The marks snippet() puts around a match: private-use characters, which
// the sanitizer would not remove from a text (a hostile text holding them
// can at worst move a highlight).
const (
	markOpen  = "\uE000"
	markClose = "\uE001"
)

// Search finds the messages that match q, newest first.
func (ix *Index) Search(ctx context.Context, q Query) ([]Hit, error) {
	match, err := ftsQuery(q.Text)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	where := []string{"texts MATCH ?"}
	args := []any{match}
	if q.System != "" {
		where, args = append(where, "s.system = ?"), append(args, q.System)
	}
	if q.Project != "" {
		where, args = append(where, "(s.project = ? OR s.project LIKE ? ESCAPE '\\')"), append(args, q.Project, likePrefix(strings.TrimRight(q.Project, "/")+"/"))
	}
	// The ids are in time order (see idShift): a time range is a range
	// of the search table's rows, which FTS5 reads alone.
	if !q.Since.IsZero() {
		where, args = append(where, "texts.rowid >= ?", "m.at >= ?"), append(args, max(q.Since.Unix(), 0)<<idShift, q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		where, args = append(where, "texts.rowid < ?", "m.at < ?"), append(args, (max(q.Until.Unix(), 0)+1)<<idShift, q.Until.UnixMilli())
	}
	if q.Role != "" {
		where, args = append(where, "m.role = ?"), append(args, q.Role)
	}
	if q.Tool != "" {
		where, args = append(where, "m.tool = ? COLLATE NOCASE"), append(args, q.Tool)
	}
	args = append(args, limit)
	rows, err := ix.db.QueryContext(ctx, `SELECT s.sid, s.system, s.project, s.title, s.path, s.deleted, m.at, m.role, m.tool, m.key,
			snippet(texts, 0, '`+markOpen+`', '`+markClose+`', '…', 24)
		FROM texts JOIN messages m ON m.id = texts.rowid JOIN sessions s ON s.id = m.session
		WHERE `+strings.Join(where, " AND ")+`
		ORDER BY texts.rowid DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		var at int64
		var deleted int
		var snip string
		if err := rows.Scan(&h.Session, &h.System, &h.Project, &h.Title, &h.Path, &deleted, &at, &h.Role, &h.Tool, &h.Key, &snip); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		h.Deleted = deleted == 1
		h.At = time.UnixMilli(at)
		h.Title = sanitize.Line(h.Title)
		h.Snippet = snippetParts(snip)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return hits, nil
}

// snippetParts splits a marked snippet into sanitized one-line parts.
func snippetParts(s string) []Part {
	var parts []Part
	match := false
	for s != "" {
		mark := markOpen
		if match {
			mark = markClose
		}
		i := strings.Index(s, mark)
		piece := s
		if i >= 0 {
			piece, s = s[:i], s[i+len(mark):]
		} else {
			s = ""
		}
		// One line: the text's line breaks and tabs become spaces.
		piece = strings.NewReplacer(markOpen, "", markClose, "", "\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(piece)
		if t := sanitize.Line(piece); t != "" {
			parts = append(parts, Part{Text: t, Match: match})
		}
		if i >= 0 {
			match = !match
		}
	}
	return parts
}

// QueryError is a search query that cannot be read.
type QueryError struct{ Msg string }

func (e *QueryError) Error() string { return e.Msg }

// ftsQuery turns what a user typed into an FTS5 query that means only
// what they typed: every word and "phrase" must match, a word ending in *
// is a prefix; FTS5's own operators and punctuation are taken as text.
func ftsQuery(s string) (string, error) {
	var terms []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		var tok string
		prefix := false
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				tok, s = s[1:], ""
			} else {
				tok, s = s[1:1+end], s[2+end:]
			}
		} else {
			end := strings.IndexFunc(s, unicode.IsSpace)
			if end < 0 {
				end = len(s)
			}
			tok, s = s[:end], s[end:]
			if strings.HasSuffix(tok, "*") {
				tok, prefix = strings.TrimRight(tok, "*"), true
			}
		}
		if !strings.ContainsFunc(tok, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			continue // nothing a token could hold
		}
		t := `"` + strings.ReplaceAll(tok, `"`, `""`) + `"`
		if prefix {
			t += "*"
		}
		terms = append(terms, t)
	}
	if len(terms) == 0 {
		return "", &QueryError{Msg: "search: the query has no words"}
	}
	return strings.Join(terms, " "), nil
}

func likePrefix(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s) + "%"
}
