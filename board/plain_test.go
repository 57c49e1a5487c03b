package board

import (
	"testing"
	"time"
)

func TestPlainLine(t *testing.T) {
	for in, want := range map[string]string{
		"## Summary":                          "Summary",
		"**Done**: see [the PR](https://x/1)": "Done: see the PR",
		"- [x] `go test` passes":              "go test passes",
		"> 1. first, *kept* as is":            "first, *kept* as is",
		"plain words_with_underscores":        "plain words_with_underscores",
		"![diagram](a.png)":                   "diagram",
		"  ":                                  "",
	} {
		if got := PlainLine(in); got != want {
			t.Errorf("PlainLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// A row's last reply (the board's column, perch tasks --all, the
// notification's body) is plain text.
func TestRowLastReplyIsPlain(t *testing.T) {
	m := NewModel([]SourceState{{Name: "s", Conn: Live}})
	m.SetSessions("s", []Session{{ID: "a", Name: "a", Status: Idle, LastReply: "## Summary\nmore"}}, time.Now())
	if _, rows := m.Sources(), m.Rows(Filter{}); len(rows) != 1 || rows[0].LastReply != "Summary" {
		t.Errorf("rows: %+v", rows)
	}
}
