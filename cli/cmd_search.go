package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/perch-tui/perch/index"
	"github.com/perch-tui/perch/tui"
)

func runSearch(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "search")
	system := fs.String("system", "", "only sessions of this system: "+kindNames())
	project := fs.String("project", "", "only sessions run in this directory (or under it)")
	since := fs.String("since", "", "only messages at or after: a date, a time or an age (7d)")
	until := fs.String("until", "", "only messages before: a date, a time or an age")
	role := fs.String("role", "", "only messages of: user, assistant or tool")
	tool := fs.String("tool", "", "only the calls and results of this tool (Bash, Edit, …)")
	limit := fs.Int("limit", 50, "how many hits to show, newest first")
	asJSON := fs.Bool("json", false, "print one JSON object a line")
	pos, err := parse(fs, args, 1, -1)
	if err != nil {
		return err
	}
	now := time.Now()
	q := index.Query{Text: strings.Join(pos, " "), System: *system, Project: *project, Role: *role, Tool: *tool, Limit: *limit}
	if q.Since, err = parseWhen("since", *since, now); err != nil {
		return err
	}
	if q.Until, err = parseWhen("until", *until, now); err != nil {
		return err
	}
	if *role != "" {
		if err := oneOf("role", *role, "user", "assistant", "tool"); err != nil {
			return err
		}
	}
	ix, err := openIndex(ctx, env)
	if err != nil {
		return err
	}
	defer ix.Close()
	hits, err := ix.Search(ctx, q)
	var qe *index.QueryError
	if errors.As(err, &qe) {
		return usagef("%s", qe.Msg)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		for _, h := range hits {
			if err := enc.Encode(h); err != nil {
				return err
			}
		}
		return nil
	}
	if len(hits) == 0 {
		fmt.Fprintln(env.Stderr, "perch: no message matches (perch index reads new sessions)")
		return nil
	}
	for _, h := range hits {
		who := h.Role
		if h.Tool != "" {
			who += " " + h.Tool
		}
		mark := ""
		if h.Deleted {
			mark = " (source deleted)"
		}
		fmt.Fprintf(env.Stdout, "%s  %s %s%s  %s  %s\n", h.At.Local().Format("2006-01-02 15:04"), shortID(h.Session), h.System, mark, who, highlight(h.Snippet, env.IsTerminal))
	}
	return nil
}

// highlight joins a snippet's parts, the matches in bold on a terminal.
func highlight(parts []index.Part, terminal bool) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Match && terminal {
			b.WriteString("\x1b[1;4m" + p.Text + "\x1b[22;24m")
			continue
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// uiSearch is the UI's search across sessions (tui.Config.Search): the
// index opened for each query (the UI runs it in a command), so that the
// UI holds no file open and another perch indexing meanwhile is seen.
func uiSearch(env Env) func(ctx context.Context, query string) ([]tui.SearchHit, error) {
	return func(ctx context.Context, query string) ([]tui.SearchHit, error) {
		if _, err := os.Stat(indexPath(env)); errors.Is(err, os.ErrNotExist) {
			return nil, tui.ErrNoIndex // searching must not create it
		}
		ix, err := openIndex(ctx, env)
		if err != nil {
			return nil, err
		}
		defer ix.Close()
		hits, err := ix.Search(ctx, index.Query{Text: query, Limit: 100})
		if err != nil {
			return nil, err
		}
		if len(hits) == 0 {
			if st, err := ix.Stats(ctx); err == nil && st.Sessions == 0 {
				return nil, tui.ErrNoIndex
			}
		}
		out := make([]tui.SearchHit, len(hits))
		for i, h := range hits {
			out[i] = tui.SearchHit{Session: h.Session, System: h.System, Title: h.Title, Deleted: h.Deleted, At: h.At,
				Role: h.Role, Tool: h.Tool, Snippet: make([]tui.SnippetPart, len(h.Snippet))}
			for j, p := range h.Snippet {
				out[i].Snippet[j] = tui.SnippetPart{Text: p.Text, Match: p.Match}
			}
		}
		return out, nil
	}
}
