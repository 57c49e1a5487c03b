package events

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/perch-tui/perch/jsonx"
)

// fillStructured reads the legacy structured results of docs/protocol.md §7.
func fillStructured(r *ToolResult, name string, raw []byte) {
	ctor, payload := splitCtor(raw)
	switch name {
	case "execute_command":
		var w struct {
			Command string  `json:"command"`
			Status  rawJSON `json:"status"`
			Stdout  rawJSON `json:"stdout"`
			Stderr  rawJSON `json:"stderr"`
		}
		if json.Unmarshal(payload, &w) != nil {
			return
		}
		stdout, ok1 := optString(w.Stdout)
		stderr, ok2 := optString(w.Stderr)
		if !ok1 || !ok2 {
			return
		}
		c := &CommandResult{Command: w.Command, Stdout: within(r.Text, stdout), Stderr: within(r.Text, stderr), TimedOut: ctor == "TimedOut"}
		if w.Status != nil && !isNull(w.Status) {
			n := int(jsonInt(w.Status))
			c.ExitCode = &n
		}
		r.Command = c
	case "list_files":
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
		l := &FileListing{Path: w.Path}
		for _, e := range w.Entries {
			l.Entries = append(l.Entries, FileEntry{Name: e.Name, Kind: e.Kind, Hidden: e.IsHidden})
		}
		r.Listing = l
	case "read_file":
		var w struct {
			Path      string  `json:"path"`
			Content   rawJSON `json:"content"`
			StartLine rawJSON `json:"start_line"`
			EndLine   rawJSON `json:"end_line"`
		}
		if json.Unmarshal(payload, &w) != nil {
			return
		}
		if f := parseReadText(r.Text); f != nil {
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
		start, end := int(jsonInt(w.StartLine)), int(jsonInt(w.EndLine))
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
		r.File = &FileContent{Path: w.Path, StartLine: start, EndLine: end, Content: content}
	case "search_files":
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
		s := &SearchResult{Message: w.Message, Total: int(jsonInt(w.TotalMatches))}
		for _, h := range w.Results {
			s.Hits = append(s.Hits, SearchHit{Path: h.Path, Line: int(jsonInt(h.LineNumber)), Context: h.Context})
		}
		r.Search = s
	case "todo":
		var w struct {
			Todos json.RawMessage `json:"todos"`
		}
		if json.Unmarshal(payload, &w) == nil && w.Todos != nil {
			r.Todos = parseTodoList(w.Todos)
			if r.Todos == nil {
				r.Todos = []Todo{}
			}
		}
	case "write_to_file", "replace_in_file":
		var w struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(payload, &w) == nil && w.Path != "" {
			r.Write = &WriteResult{Path: w.Path}
		}
	case "meta_write_to_file":
		var w struct {
			Path    string `json:"path"`
			Message string `json:"message"`
			Diff    string `json:"diff"`
		}
		if json.Unmarshal(payload, &w) == nil {
			r.Patch = &PatchResult{Message: w.Message, Modified: nonEmpty(w.Path), Diff: w.Diff}
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
	if len(raw) == 0 || isNull(raw) {
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
		var parts []rawJSON
		if json.Unmarshal(raw, &parts) == nil && len(parts) == 2 {
			return str(parts[0]), parts[1]
		}
	}
	return "", raw
}

// detailsKind names the details a ToolResult reads from its Text on demand.
type detailsKind uint8

const (
	detailsNone detailsKind = iota
	detailsListing
	detailsSearch
)

// listHeader starts list_files' HEAD text.
const listHeader = "Directory: "

// hasDetails: r has per-tool details, kept or to be read from its text.
func (r *ToolResult) hasDetails() bool {
	return r.Command != nil || r.Listing != nil || r.File != nil || r.Search != nil || r.Write != nil ||
		r.Patch != nil || r.Todos != nil || r.fromText != detailsNone
}

// FileListing is list_files' listing: Listing when the result came with
// it, else read from the HEAD text (a new value at each call: callers that
// draw it keep what they drew, not the listing). nil when there is none.
func (r *ToolResult) FileListing() *FileListing {
	if r == nil {
		return nil
	}
	if r.Listing != nil || r.fromText != detailsListing {
		return r.Listing
	}
	return parseListText(r.Text)
}

// SearchResult is search_files' hits: Search when the result came with
// them, else read from the HEAD text (a new value at each call, like
// FileListing). nil when there are none.
func (r *ToolResult) SearchResult() *SearchResult {
	if r == nil {
		return nil
	}
	if r.Search != nil || r.fromText != detailsSearch {
		return r.Search
	}
	return parseSearchText(r.Text)
}

// fillDetails parses the HEAD text of a successful tool call into the
// per-tool details, unless a legacy structure already gave them.
func fillDetails(r *ToolResult, name string, call ToolCall) {
	if r.hasDetails() {
		return
	}
	text := r.Text
	switch name {
	case "execute_command":
		r.Command = parseCommandText(text, argString(call, "command"))
	case "read_file":
		r.File = parseReadText(text)
	case "list_files":
		// Read when drawn (FileListing): only a text that is a listing.
		if strings.HasPrefix(text, listHeader) {
			r.fromText = detailsListing
		}
	case "search_files":
		r.fromText = detailsSearch // read when drawn (SearchResult)
	case "write_to_file", "replace_in_file":
		for _, p := range []string{"Content written to file at path: ", "Changes applied to ", "New file created and content written to "} {
			if strings.HasPrefix(text, p) {
				r.Write = &WriteResult{Path: strings.TrimSpace(strings.TrimPrefix(text, p))}
			}
		}
	case "apply_patch":
		var w struct {
			Message  string   `json:"message"`
			Added    []string `json:"added"`
			Modified []string `json:"modified"`
			Deleted  []string `json:"deleted"`
		}
		p := &PatchResult{Diff: argString(call, "patch")}
		if json.Unmarshal([]byte(text), &w) == nil {
			p.Message, p.Added, p.Modified, p.Deleted = w.Message, w.Added, w.Modified, w.Deleted
		} else {
			p.Message = text
		}
		r.Patch = p
	case "todo":
		r.Todos = parseTodoText(text)
		if r.Todos == nil && strings.EqualFold(argString(call, "action"), "create") {
			r.Todos = todosFromArgs(call)
		}
	}
}

// The regular expressions are compiled when first used, not at package
// initialisation, which every perch command pays (docs/performance.md,
// "Startup").
var commandHead = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)^Command (.*?) (exited with status (-?\d+)|timed out after \d+ seconds)\.`)
})

// sectionHeads finds execute_command's "=== STDOUT (k lines) ===" and
// "=== STDERR (…) ===" lines, i.e. the matches of the regexp
// (?m)^=== (STDOUT|STDERR) \(([^)]*)\) ===$, as [start, end, name start,
// name end]. A hand scan: the regexp cost more than the rest of decoding a
// large output.
func sectionHeads(text string) [][4]int {
	var out [][4]int
	for from := 0; from < len(text); {
		i := strings.Index(text[from:], "=== STD")
		if i < 0 {
			break
		}
		start := from + i
		from = start + 1
		if start > 0 && text[start-1] != '\n' {
			continue
		}
		rest := text[start+4:]
		if !strings.HasPrefix(rest, "STDOUT (") && !strings.HasPrefix(rest, "STDERR (") {
			continue
		}
		paren := strings.IndexByte(rest[8:], ')')
		if paren < 0 {
			continue
		}
		end := start + 4 + 8 + paren
		if !strings.HasPrefix(text[end:], ") ===") {
			continue
		}
		end += len(") ===")
		if end < len(text) && text[end] != '\n' {
			continue
		}
		out = append(out, [4]int{start, end, start + 4, start + 10})
		from = end
	}
	return out
}

// parseCommandText reads execute_command's text: "Command <cmd> exited with
// status <n>." then optional "=== STDOUT (k lines) ===" / STDERR sections.
func parseCommandText(text, cmd string) *CommandResult {
	c := &CommandResult{Command: cmd}
	prefix := "Command " + cmd + " "
	rest := ""
	switch {
	case cmd != "" && strings.HasPrefix(text, prefix+"exited with status "):
		rest = text[len(prefix+"exited with status "):]
		end := strings.IndexByte(rest, '.')
		if end < 0 {
			return nil
		}
		n, err := strconv.Atoi(rest[:end])
		if err != nil {
			return nil
		}
		c.ExitCode = &n
		rest = rest[end+1:]
	case cmd != "" && strings.HasPrefix(text, prefix+"timed out after "):
		c.TimedOut = true
		rest = text[len(prefix):]
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			rest = rest[i:]
		} else {
			rest = ""
		}
	default:
		m := commandHead().FindStringSubmatchIndex(text)
		if m == nil {
			return nil
		}
		c.Command = text[m[2]:m[3]]
		if m[6] >= 0 {
			n, _ := strconv.Atoi(text[m[6]:m[7]])
			c.ExitCode = &n
		} else {
			c.TimedOut = true
		}
		rest = text[m[1]:]
	}
	heads := sectionHeads(rest)
	for i, h := range heads {
		start := h[1]
		if start < len(rest) && rest[start] == '\n' {
			start++
		}
		end := len(rest)
		if i+1 < len(heads) {
			end = heads[i+1][0]
		}
		body := strings.TrimSuffix(rest[start:end], "\n")
		if rest[h[2]:h[3]] == "STDOUT" {
			c.Stdout = body
		} else {
			c.Stderr = body
		}
	}
	return c
}

var readHead = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^File: (.*) \(lines (\d+)-(\d+) \(\d+ lines\)\)$`)
})

// parseReadText reads read_file's "File: p (lines s-e (n lines))" header and
// " L12 | text" rows. The rows are kept as they are in the text (Numbered):
// stripping them would copy the whole output.
func parseReadText(text string) *FileContent {
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

// listIcons are list_files' entry icons and the kinds they stand for.
var listIcons = [...]struct{ icon, kind string }{
	{"📁 ", "directory"}, {"📄 ", "file"}, {"🔗 ", "symlink"}, {"❓ ", "other"},
}

// parseListText reads list_files' "Directory: p\nTotal: …\n\n<icon> name".
func parseListText(text string) *FileListing {
	if !strings.HasPrefix(text, listHeader) {
		return nil
	}
	lines := strings.Split(text, "\n")
	l := &FileListing{Path: strings.TrimPrefix(lines[0], listHeader)}
	n := 0
	for _, line := range lines[1:] {
		for _, ic := range listIcons {
			if strings.HasPrefix(line, ic.icon) {
				n++
				break
			}
		}
	}
	if n > 0 {
		l.Entries = make([]FileEntry, 0, n) // kept: no room to spare
	}
	for _, line := range lines[1:] {
		kind := ""
		for _, ic := range listIcons {
			if strings.HasPrefix(line, ic.icon) {
				kind, line = ic.kind, strings.TrimPrefix(line, ic.icon)
				break
			}
		}
		if kind == "" {
			continue
		}
		e := FileEntry{Name: line, Kind: kind}
		if n, ok := strings.CutSuffix(line, " [hidden]"); ok {
			e.Name, e.Hidden = n, true
		}
		l.Entries = append(l.Entries, e)
	}
	return l
}

// parseSearchText reads search_files' message, then "path:line" headers
// followed by "n: text" context lines. By hand: the regexps it was
// written with (searchHitRE, searchTotalRE in the tests, which check that
// both agree) cost more than the rest of decoding a search.
func parseSearchText(text string) *SearchResult {
	msg, body, _ := strings.Cut(text, "\n\n")
	s := &SearchResult{Message: msg}
	if n, ok := foundMatches(msg); ok {
		s.Total, _ = strconv.Atoi(n)
	}
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

// foundMatches finds the leftmost "Found <digits> matches" in msg and
// returns its digits.
func foundMatches(msg string) (string, bool) {
	for from := 0; ; {
		i := strings.Index(msg[from:], "Found ")
		if i < 0 {
			return "", false
		}
		start := from + i + len("Found ")
		j := start
		for j < len(msg) && msg[j] >= '0' && msg[j] <= '9' {
			j++
		}
		if j > start && strings.HasPrefix(msg[j:], " matches") {
			return msg[start:j], true
		}
		from += i + 1
	}
}

// ctxLine: "12: text" is a context line, not a "path:12" header.
func ctxLine(line string) bool {
	i := strings.Index(line, ": ")
	return i > 0 && isDigits(line[:i])
}

// Todo status/priority icons of maria's todo tool (§7.7).
var (
	todoStatusIcons   = map[string]string{"✅": "completed", "🔄": "in_progress", "⏳": "pending"}
	todoPriorityIcons = map[string]string{"🔴": "high", "🟡": "medium", "🟢": "low"}
	todoLine          = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*(?:\d+\.\s*)?(\S+)\s+(\S+)\s+\[([^\]]*)\]\s?(.*)$`)
	})
)

// parseTodoText reads the full todo list out of the todo tool's text: a Read
// listing, or a Write's "Newly created todos" / "Current todo list" section
// (the "Updated items" section repeats items and is skipped). nil when the
// text holds no list.
func parseTodoText(text string) []Todo {
	var out []Todo
	found := false
	inList := !strings.Contains(text, "📝")
	if strings.HasPrefix(text, "=== Current Session Todo List ===") {
		inList = true
		found = true
	}
	for _, line := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "📝 Newly created todos") || strings.HasPrefix(trim, "📝 Current todo list"):
			inList, found = true, true
			continue
		case strings.HasPrefix(trim, "✨ Updated items") || strings.HasPrefix(trim, "📊"):
			inList = false
			continue
		case strings.HasPrefix(trim, "└─"):
			if inList && len(out) > 0 {
				out[len(out)-1].Notes = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(trim, "└─"), " 📝"))
			}
			continue
		}
		if !inList {
			continue
		}
		m := todoLine().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		t := Todo{ID: m[3], Content: strings.TrimSpace(m[4])}
		for _, icon := range []string{m[1], m[2]} {
			icon = strings.TrimRight(icon, "\ufe0f")
			if s, ok := todoStatusIcons[icon]; ok {
				t.Status = s
			}
			if p, ok := todoPriorityIcons[icon]; ok {
				t.Priority = p
			}
		}
		if t.Status == "" && t.Priority == "" {
			continue
		}
		found = true
		out = append(out, t)
	}
	if !found {
		return nil
	}
	if out == nil {
		out = []Todo{}
	}
	return out
}

// todosFromArgs builds the list a todo "create" call asked for, when its
// text could not be read: each non-empty line (or <task>…</task>) of content.
func todosFromArgs(call ToolCall) []Todo {
	content := argString(call, "content")
	if content == "" {
		return nil
	}
	var items []string
	if strings.Contains(content, "<task>") {
		for _, part := range strings.Split(content, "<task>")[1:] {
			if t, _, ok := strings.Cut(part, "</task>"); ok {
				items = append(items, t)
			}
		}
	} else {
		items = strings.Split(content, "\n")
	}
	prio := normPriority(argString(call, "priority"))
	status := normStatus(argString(call, "status"))
	var out []Todo
	for _, it := range items {
		it = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(it), "-*•0123456789.)"))
		if it == "" {
			continue
		}
		out = append(out, Todo{Content: it, Status: status, Priority: prio})
	}
	return out
}

// parseTodoList reads a list of maria Todo items (§8.6).
func parseTodoList(raw []byte) []Todo {
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
	out := make([]Todo, 0, len(list))
	for _, t := range list {
		out = append(out, Todo{ID: idString(t.ID), Content: t.Content, Status: normStatus(t.Status),
			Priority: normPriority(t.Priority), Notes: t.Notes})
	}
	return out
}

func normStatus(s string) string {
	switch strings.ToLower(strings.NewReplacer("-", "", "_", "", " ", "").Replace(s)) {
	case "completed", "done", "complete":
		return "completed"
	case "inprogress", "active", "doing":
		return "in_progress"
	}
	return "pending"
}

func normPriority(s string) string {
	switch strings.ToLower(s) {
	case "high":
		return "high"
	case "low":
		return "low"
	}
	return "medium"
}

// argString reads one string argument of a call ("" when absent).
func argString(c ToolCall, key string) string {
	if len(c.Args) == 0 || c.Args[0] != '{' {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(c.Args, &m) != nil {
		return ""
	}
	return str(m[key])
}

// keyArg picks the argument a person wants to see first.
func keyArg(name string, c ToolCall) string {
	for _, k := range keyArgNames(name) {
		if v := argString(c, k); v != "" {
			return v
		}
	}
	if len(c.Args) == 0 && c.ArgsRaw != "" {
		return c.ArgsRaw
	}
	return ""
}

func keyArgNames(name string) []string {
	switch name {
	case "execute_command":
		return []string{"command"}
	case "search_files":
		return []string{"regex", "path"}
	case "todo":
		return []string{"action"}
	case "apply_patch":
		return []string{"path"}
	}
	return []string{"path", "command", "query", "file", "url", "pattern", "action"}
}
