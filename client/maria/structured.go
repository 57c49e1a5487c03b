package maria

// maria's legacy structured tool results and its todo lists: wire shapes
// of maria's tools' outcomes (docs/protocol.md §7, §8.6), read into the
// normalized result types.

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/jsonx"
	"github.com/perch-tui/perch/tools"
)

// fillStructured reads the legacy structured results of docs/protocol.md §7:
// maria's wire shapes of its tools' outcomes, by the tool's format.
func fillStructured(r *events.ToolResult, name string, raw []byte) {
	ctor, payload := splitCtor(raw)
	switch tools.FormatOf(name) {
	case tools.FormatCommand:
		var w struct {
			Command string    `json:"command"`
			Status  jsonx.Raw `json:"status"`
			Stdout  jsonx.Raw `json:"stdout"`
			Stderr  jsonx.Raw `json:"stderr"`
		}
		if json.Unmarshal(payload, &w) != nil {
			return
		}
		stdout, ok1 := optString(w.Stdout)
		stderr, ok2 := optString(w.Stderr)
		if !ok1 || !ok2 {
			return
		}
		c := &events.CommandResult{Command: w.Command, Stdout: within(r.Text, stdout), Stderr: within(r.Text, stderr), TimedOut: ctor == "TimedOut"}
		if w.Status != nil && !jsonx.IsNull(w.Status) {
			n := int(jsonx.Int(w.Status))
			c.ExitCode = &n
		}
		r.Command = c
	case tools.FormatListing:
		var w struct {
			Path    string `json:"path"`
			Entries []struct {
				Name     string `json:"name"`
				Kind     string `json:"kind"`
				IsHidden bool   `json:"is_hidden"`
			} `json:"entries"`
		}
		if json.Unmarshal(payload, &w) != nil {
			return
		}
		l := &events.FileListing{Path: w.Path}
		for _, e := range w.Entries {
			l.Entries = append(l.Entries, events.FileEntry{Name: e.Name, Kind: e.Kind, Hidden: e.IsHidden})
		}
		r.Listing = l
	case tools.FormatRead:
		var w struct {
			Path      string    `json:"path"`
			Content   jsonx.Raw `json:"content"`
			StartLine jsonx.Raw `json:"start_line"`
			EndLine   jsonx.Raw `json:"end_line"`
		}
		if json.Unmarshal(payload, &w) != nil {
			return
		}
		if f := tools.ParseRead(r.Text); f != nil {
			// The text holds the requested rows, all a reader is shown:
			// the whole file need not be kept beside it.
			r.File = f
			return
		}
		all, ok := optString(w.Content)
		if !ok {
			return
		}
		// Legacy content is the whole file; show the requested range (a
		// slice of it: the lines are not copied).
		start, end := int(jsonx.Int(w.StartLine)), int(jsonx.Int(w.EndLine))
		n := strings.Count(all, "\n") + 1
		if start < 1 {
			start = 1
		}
		if end < start || end > n {
			end = n
		}
		content := all
		if start <= n {
			content = lineRange(all, start-1, end)
		}
		r.File = &events.FileContent{Path: w.Path, StartLine: start, EndLine: end, Content: content}
	case tools.FormatSearch:
		var w struct {
			Message      string          `json:"message"`
			TotalMatches json.RawMessage `json:"total_matches"`
			Results      []struct {
				Context    string          `json:"context"`
				LineNumber json.RawMessage `json:"line_number"`
				Path       string          `json:"path"`
			} `json:"results"`
		}
		if json.Unmarshal(payload, &w) != nil {
			return
		}
		s := &events.SearchResult{Message: w.Message, Total: int(jsonx.Int(w.TotalMatches))}
		for _, h := range w.Results {
			s.Hits = append(s.Hits, events.SearchHit{Path: h.Path, Line: int(jsonx.Int(h.LineNumber)), Context: h.Context})
		}
		r.Search = s
	case tools.FormatTodo:
		var w struct {
			Todos json.RawMessage `json:"todos"`
		}
		if json.Unmarshal(payload, &w) == nil && w.Todos != nil {
			r.Todos = parseTodoList(w.Todos)
			if r.Todos == nil {
				r.Todos = []events.Todo{}
			}
		}
	case tools.FormatWrite:
		var w struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(payload, &w) == nil && w.Path != "" {
			r.Write = &events.WriteResult{Path: w.Path}
		}
	case tools.FormatMetaWrite:
		var w struct {
			Path    string `json:"path"`
			Message string `json:"message"`
			Diff    string `json:"diff"`
		}
		if json.Unmarshal(payload, &w) == nil {
			r.Patch = &events.PatchResult{Message: w.Message, Modified: nonEmpty(w.Path), Diff: w.Diff}
		}
	}
	if r.Text == "" && r.Command != nil {
		// Older builds always sent text, but don't rely on it.
		r.Text = strings.TrimRight(r.Command.Stdout+"\n"+r.Command.Stderr, "\n")
	}
}

// optString reads a JSON string that may be absent (""); ok is false for
// any other type, as json.Unmarshal into a string would fail.
func optString(raw []byte) (string, bool) {
	if len(raw) == 0 || jsonx.IsNull(raw) {
		return "", true
	}
	return jsonx.Unquote(raw)
}

// within returns s as a slice of text when text holds it, so that a large
// detail (a legacy stdout that the text repeats) is not kept twice.
func within(text, s string) string {
	if len(s) < 64<<10 {
		return s
	}
	if i := strings.Index(text, s); i >= 0 {
		return text[i : i+len(s)]
	}
	return s
}

// lineRange is lines [from, to) of s (0-based), as a slice of s.
func lineRange(s string, from, to int) string {
	start := 0
	for i := 0; i < from; i++ {
		j := strings.IndexByte(s[start:], '\n')
		if j < 0 {
			return ""
		}
		start += j + 1
	}
	end := start
	for i := from; i < to; i++ {
		j := strings.IndexByte(s[end:], '\n')
		if j < 0 {
			return s[start:]
		}
		end += j + 1
	}
	return s[start : end-1]
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// splitCtor unwraps MoonBit enum JSON ["Ctor", payload]; an object is its
// own payload.
func splitCtor(raw []byte) (string, []byte) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var parts []jsonx.Raw
		if json.Unmarshal(raw, &parts) == nil && len(parts) == 2 {
			return jsonx.String(parts[0]), parts[1]
		}
	}
	return "", raw
}

// parseTodoList reads a list of maria events.Todo items (§8.6).
func parseTodoList(raw []byte) []events.Todo {
	var list []struct {
		ID       json.RawMessage `json:"id"`
		Content  string          `json:"content"`
		Status   string          `json:"status"`
		Priority string          `json:"priority"`
		Notes    string          `json:"notes"`
	}
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	out := make([]events.Todo, 0, len(list))
	for _, t := range list {
		out = append(out, events.Todo{ID: jsonx.ID(t.ID), Content: t.Content, Status: tools.NormStatus(t.Status),
			Priority: tools.NormPriority(t.Priority), Notes: t.Notes})
	}
	return out
}
