package attocode

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// The session stores, both SQLite:
//
// The Python store has sessions(id, task, status, created_at, updated_at,
// model, total_tokens, total_cost, …) and checkpoints(id, session_id,
// messages, metrics, created_at): each checkpoint holds the whole
// conversation as a JSON array, so the newest one is the session.
// Beside them: usage_logs (one row per model call: iteration, provider,
// input/output/cache tokens, cost), compaction_history and tool_calls (by
// name and arguments, with a JSON result).
//
// The TypeScript store has sessions(id, name, created_at, last_active_at,
// …) and entries(session_id, timestamp, type, data): the entries of the
// session log, one per row.

// storeKind says which of the two stores a database is.
type storeKind int

const (
	notStore storeKind = iota
	pythonStore
	legacyStore
)

func kindOf(t map[string]map[string]bool) storeKind {
	s, c, e := t["sessions"], t["checkpoints"], t["entries"]
	switch {
	case s != nil && c != nil && c["messages"] && c["session_id"]:
		return pythonStore
	case s != nil && e != nil && e["type"] && e["data"] && e["session_id"]:
		return legacyStore
	}
	return notStore
}

// snapshot is what is read of one session, inside one read transaction.
type snapshot struct {
	kind     storeKind
	session  row
	count    int    // sessions in the store
	picked   bool   // --session chose it
	cpID     string // the checkpoint used
	messages string // its messages (JSON)
	skipped  []string
	usage    []row
	compacts []row
	tools    []row
	entries  []row // the TypeScript store's entries
}

func readStore(ctx context.Context, path, want string) (*snapshot, string, error) {
	var snap *snapshot
	note, err := readDB(ctx, path, func(tx *sql.Tx) error {
		snap = nil
		t, err := tables(tx)
		if err != nil {
			return err
		}
		s := &snapshot{kind: kindOf(t)}
		if s.kind == notStore {
			return userError{errors.New("not an Attocode session store: it has no sessions with checkpoints or entries")}
		}
		sessions, err := queryRows(tx, "SELECT * FROM sessions")
		if err != nil {
			return err
		}
		s.count = len(sessions)
		if s.session, err = pick(sessions, want, s.kind); err != nil {
			return err
		}
		s.picked = want != ""
		id := s.session.str("id")
		if s.kind == legacyStore {
			s.entries, err = queryRows(tx, "SELECT * FROM entries WHERE session_id = ? ORDER BY id", id)
			snap = s
			return err
		}
		if err := s.readCheckpoint(tx, id); err != nil {
			return err
		}
		for _, q := range []struct {
			table string
			dst   *[]row
		}{{"usage_logs", &s.usage}, {"compaction_history", &s.compacts}, {"tool_calls", &s.tools}} {
			if t[q.table] == nil || !t[q.table]["session_id"] {
				continue
			}
			if *q.dst, err = queryRows(tx, "SELECT * FROM "+q.table+" WHERE session_id = ? ORDER BY rowid", id); err != nil {
				return err
			}
		}
		snap = s
		return nil
	})
	return snap, note, err
}

// readCheckpoint keeps the newest checkpoint whose messages are JSON (or,
// when none is, the newest, to read as far as it goes).
func (s *snapshot) readCheckpoint(tx *sql.Tx, session string) error {
	ids, err := queryRows(tx, "SELECT rowid AS rid FROM checkpoints WHERE session_id = ? ORDER BY rowid DESC", session)
	if err != nil {
		return err
	}
	for i, r := range ids {
		var text sql.NullString
		if err := tx.QueryRow("SELECT messages FROM checkpoints WHERE rowid = ?", r["rid"]).Scan(&text); err != nil {
			return err
		}
		if i == 0 {
			s.cpID, s.messages = r.str("rid"), text.String
		}
		if json.Valid(ingest.Repair([]byte(text.String))) {
			s.cpID, s.messages = r.str("rid"), text.String
			return nil
		}
		s.skipped = append(s.skipped, r.str("rid"))
	}
	s.skipped = nil // none is whole: the newest is read as far as it goes
	return nil
}

// pick chooses the session: the one named (an id or a unique prefix of
// one), or the newest.
func pick(sessions []row, want string, kind storeKind) (row, error) {
	if len(sessions) == 0 {
		return nil, userError{errors.New("the store holds no sessions")}
	}
	// Ties go to the later row.
	for i, j := 0, len(sessions)-1; i < j; i, j = i+1, j-1 {
		sessions[i], sessions[j] = sessions[j], sessions[i]
	}
	sort.SliceStable(sessions, func(i, j int) bool { return newer(sessions[i], sessions[j], kind) })
	if want == "" {
		return sessions[0], nil
	}
	var matches []row
	for _, s := range sessions {
		if s.str("id") == want {
			return s, nil
		}
		if strings.HasPrefix(s.str("id"), want) {
			matches = append(matches, s)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return nil, userError{&ingest.UsageError{Msg: fmt.Sprintf(
			"no session %q in this store; its sessions, newest first:\n%s", want, listSessions(sessions, kind))}}
	}
	return nil, userError{&ingest.UsageError{Msg: fmt.Sprintf(
		"--session %q matches %d sessions; give more of the id:\n%s", want, len(matches), listSessions(matches, kind))}}
}

// newer orders sessions newest first: by last activity, then creation,
// then the later row.
func newer(a, b row, kind storeKind) bool {
	cols := []string{"updated_at", "created_at"}
	if kind == legacyStore {
		cols = []string{"last_active_at", "created_at"}
	}
	for _, c := range cols {
		if x, y := a.num(c); y {
			if z, w := b.num(c); w && x != z {
				return x > z
			}
			continue
		}
		if x, y := a.str(c), b.str(c); x != y {
			return x > y
		}
	}
	return false
}

const maxListed = 20

func listSessions(sessions []row, kind storeKind) string {
	var b strings.Builder
	for i, s := range sessions {
		if i == maxListed {
			fmt.Fprintf(&b, "  … and %d more\n", len(sessions)-maxListed)
			break
		}
		fmt.Fprintf(&b, "  %s  %s\n", line(s.str("id"), 40), describeSession(s, kind))
	}
	return b.String()
}

func describeSession(s row, kind storeKind) string {
	var parts []string
	if st := s.str("status"); st != "" {
		parts = append(parts, st)
	}
	col := "updated_at"
	if kind == legacyStore {
		col = "last_active_at"
	}
	if f, ok := s.num(col); ok && f > 0 {
		parts = append(parts, time.Unix(int64(f), 0).UTC().Format("2006-01-02 15:04"))
	} else if t := s.str(col); t != "" {
		parts = append(parts, line(t, 20))
	}
	if t := s.str("task"); t != "" {
		parts = append(parts, line(t, 60))
	} else if n := s.str("name"); n != "" {
		parts = append(parts, line(n, 60))
	}
	return strings.Join(parts, "  ")
}

// line is s on one line, at most n bytes, valid UTF-8.
func line(s string, n int) string {
	return events.Excerpt([]byte(strings.Join(strings.Fields(s), " ")), n)
}

// importStore imports one session of a SQLite store.
func importStore(ctx context.Context, path string, opts ingest.Options, emit func(events.Event)) error {
	snap, note, err := readStore(ctx, path, opts.Session)
	if err != nil {
		var ue *ingest.UsageError
		if errors.As(err, &ue) {
			return ue
		}
		return err
	}
	if note != "" {
		emit(events.Event{Kind: events.KindNotice, Level: events.LevelWarning, NoticeKind: events.NoticeInfo, Text: note})
	}
	emit(notice(events.NoticeInfo, snap.header()))
	if snap.kind == legacyStore {
		return snap.importEntries(ctx, emit)
	}
	snap.importPython(emit)
	return ctx.Err()
}

func (s *snapshot) header() string {
	text := "Session " + line(s.session.str("id"), 80)
	var parts []string
	if st := s.session.str("status"); st != "" {
		parts = append(parts, st)
	}
	if m := s.session.str("model"); m != "" {
		parts = append(parts, line(m, 60))
	}
	if len(parts) > 0 {
		text += " (" + strings.Join(parts, ", ") + ")"
	}
	if t := s.session.str("task"); t != "" {
		text += ": " + line(t, 200)
	} else if n := s.session.str("name"); n != "" {
		text += ": " + line(n, 200)
	}
	if s.count > 1 && !s.picked {
		text += fmt.Sprintf(" — the newest of the store's %d sessions; --session picks another", s.count)
	}
	return text
}

// importEntries replays the TypeScript store's entries as its log.
func (s *snapshot) importEntries(ctx context.Context, emit func(events.Event)) error {
	d := NewDecoder()
	for i, e := range s.entries {
		rec, _ := json.Marshal(map[string]json.RawMessage{
			"timestamp": jsonString(e.str("timestamp")),
			"type":      jsonString(e.str("type")),
			"data":      rawOrString(e.str("data")),
		})
		for _, ev := range d.DecodeAt("entry "+strconv.Itoa(i+1), rec) {
			emit(ev)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	for _, ev := range d.Flush() {
		emit(ev)
	}
	emit(events.Event{Kind: events.KindRunState, RunStatus: events.StatusIdle})
	return nil
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// rawOrString is s when it is JSON, else s as a JSON string.
func rawOrString(s string) json.RawMessage {
	b := ingest.Repair([]byte(s))
	if json.Valid(b) {
		return b
	}
	return jsonString(s)
}

// importPython shows the Python store's session: compactions first (the
// checkpoint is the conversation after them), then the conversation, then
// what could not be tied to a reply, then the state.
func (s *snapshot) importPython(emit func(events.Event)) {
	for _, c := range s.compacts {
		emit(notice(events.NoticeContext, compactionText(c)))
	}
	for _, id := range s.skipped {
		emit(events.Event{Kind: events.KindNotice, Level: events.LevelWarning, NoticeKind: events.NoticeError,
			Text: fmt.Sprintf("checkpoint %s: its messages are not JSON; an older checkpoint is shown", id)})
	}
	evs := s.conversation()
	linked := s.linkUsage(evs)
	s.linkTools(evs)
	for _, ev := range evs {
		emit(ev)
	}
	if s.cpID == "" {
		emit(notice(events.NoticeInfo, "The session has no checkpoint: no conversation was saved."))
	}
	if !linked {
		if text := s.usageTotals(); text != "" {
			emit(notice(events.NoticeContext, text))
		}
	}
	if text := s.unlinkedTools(); text != "" {
		emit(notice(events.NoticeInfo, text))
	}
	st := strings.ToLower(s.session.str("status"))
	switch st {
	case "", "active", "running", "idle":
		emit(events.Event{Kind: events.KindRunState, RunStatus: events.StatusIdle})
		return
	case "failed", "error":
		emit(events.Event{Kind: events.KindNotice, Level: events.LevelError, NoticeKind: events.NoticeError,
			Text: "The session ended in failure."})
	}
	emit(events.Event{Kind: events.KindRunState, RunStatus: events.StatusStopped})
}

func compactionText(c row) string {
	text := "Context compacted"
	if it, ok := c.int("iteration"); ok {
		text += fmt.Sprintf(" at iteration %d", it)
	}
	if st := c.str("strategy"); st != "" {
		text += " (" + line(st, 40) + ")"
	}
	before, ok1 := c.int("messages_before")
	after, ok2 := c.int("messages_after")
	if ok1 && ok2 {
		text += fmt.Sprintf(": %d → %d messages", before, after)
	}
	if saved, ok := c.int("tokens_saved"); ok && saved > 0 {
		text += fmt.Sprintf(", %d tokens saved", saved)
	}
	return text + "; the conversation below is what remained."
}

// conversation decodes the checkpoint's messages, as far as they go.
func (s *snapshot) conversation() []events.Event {
	if s.cpID == "" {
		return nil
	}
	pos := "checkpoint " + s.cpID
	m := newMessages()
	var out []events.Event
	dec := json.NewDecoder(bytes.NewReader(ingest.Repair([]byte(s.messages))))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return []events.Event{badRecord(pos, []byte(s.messages), "its messages are not a JSON array")}
	}
	for i := 1; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			out = append(out, events.Event{Kind: events.KindNotice, Level: events.LevelWarning, NoticeKind: events.NoticeError,
				Text: fmt.Sprintf("%s: the messages end early, at message %d: %s", pos, i, short(err))})
			return out
		}
		out = append(out, m.message(fmt.Sprintf("%s, message %d", pos, i), raw)...)
	}
	return out
}

// linkUsage gives each reply its usage_logs row when they can be paired:
// one row per model call and one reply per call, so only when the rows
// and the replies are as many and no compaction removed replies. It
// reports whether it paired them.
func (s *snapshot) linkUsage(evs []events.Event) bool {
	if len(s.usage) == 0 {
		return false
	}
	var replies []int
	for i, ev := range evs {
		if ev.Kind == events.KindAssistantMessage {
			replies = append(replies, i)
		}
	}
	if len(replies) != len(s.usage) || len(s.compacts) > 0 {
		return false
	}
	rows := append([]row(nil), s.usage...)
	sort.SliceStable(rows, func(i, j int) bool {
		a, _ := rows[i].int("iteration")
		b, _ := rows[j].int("iteration")
		return a < b
	})
	for k, i := range replies {
		if evs[i].Usage == nil {
			evs[i].Usage = usageRow(rows[k])
		}
	}
	return true
}

// usageRow reads a usage_logs row. Anthropic counts input without the
// cache, the OpenAI-style providers with it; the provider column says
// which, and without it an input smaller than the cache reads can only
// be the former.
func usageRow(r row) *events.Usage {
	in, _ := r.int("input_tokens")
	out, _ := r.int("output_tokens")
	read, _ := r.int("cache_read_tokens")
	write, hasWrite := r.int("cache_write_tokens")
	u := &events.Usage{InputTokens: in, OutputTokens: out, CachedTokens: read}
	p := strings.ToLower(r.str("provider") + " " + r.str("model"))
	switch {
	case strings.Contains(p, "anthropic"), strings.Contains(p, "claude") && !strings.Contains(p, "openrouter"):
		u.InputTokens = in + read + write
	case strings.Contains(p, "openai"), strings.Contains(p, "openrouter"), strings.Contains(p, "azure"):
	case in < read+write:
		u.InputTokens = in + read + write
	}
	u.TotalTokens = u.InputTokens + u.OutputTokens
	if hasWrite {
		u.CacheWriteTokens, u.HasCacheWrite = write, true
	}
	if c, ok := r.num("cost"); ok {
		u.CostUSD, u.HasCost = c, true
	}
	return u
}

// usageTotals describes usage that could not be tied to replies: the sum
// of the usage_logs rows, or else the session's own totals.
func (s *snapshot) usageTotals() string {
	if len(s.usage) > 0 {
		sum := &events.Usage{}
		for _, r := range s.usage {
			sum.Add(usageRow(r))
		}
		text := fmt.Sprintf("Usage of the session's %d model calls (not tied to single replies): %d input tokens (%d cached), %d output",
			len(s.usage), sum.InputTokens, sum.CachedTokens, sum.OutputTokens)
		if sum.HasCost {
			text += fmt.Sprintf(", $%.4f", sum.CostUSD)
		}
		return text + "."
	}
	tok, ok1 := s.session.int("total_tokens")
	cost, ok2 := s.session.num("total_cost")
	if (!ok1 || tok == 0) && (!ok2 || cost == 0) {
		return ""
	}
	return fmt.Sprintf("Session totals: %d tokens, $%.4f.", tok, cost)
}

// linkTools pairs the tool_calls rows with the conversation's calls (same
// tool, same arguments, in order) and takes what the row adds to the
// result: a failure (an error in its result, or a call not approved) and
// an exit code.
func (s *snapshot) linkTools(evs []events.Event) {
	if len(s.tools) == 0 {
		return
	}
	used := make([]bool, len(s.tools))
	keys := make([]string, len(s.tools))
	for i, r := range s.tools {
		keys[i] = r.str("tool_name") + "\x00" + canonical(rawOrString(r.str("args_json")))
	}
	byCall := map[string]int{}
	for _, ev := range evs {
		if ev.Kind != events.KindAssistantMessage {
			continue
		}
		for _, tc := range ev.ToolCalls {
			key := tc.Name + "\x00" + canonical(tc.Args)
			for i := range s.tools {
				if !used[i] && keys[i] == key {
					used[i] = true
					byCall[tc.ID] = i
					break
				}
			}
		}
	}
	for _, ev := range evs {
		if ev.Kind != events.KindPostToolCall || ev.Tool == nil || ev.Tool.Result == nil {
			continue
		}
		i, ok := byCall[ev.Tool.Call.ID]
		if !ok {
			continue
		}
		r, res := s.tools[i], ev.Tool.Result
		if o := normalize.AsObject(rawOrString(r.str("result_json"))); o != nil {
			if bad, text := errorOf(o["error"]); bad && !res.IsError {
				res.IsError, res.ErrorText = true, text
			}
			if res.ExitCode == nil {
				res.ExitCode = exitCode(o)
			}
		}
		if ok, known := r.int("approved"); known && ok == 0 && !res.IsError {
			res.IsError, res.ErrorText = true, "not approved"
		}
	}
	s.tools = unused(s.tools, used)
}

func unused(rows []row, used []bool) []row {
	var out []row
	for i, r := range rows {
		if !used[i] {
			out = append(out, r)
		}
	}
	return out
}

func (s *snapshot) unlinkedTools() string {
	if len(s.tools) == 0 {
		return ""
	}
	count := map[string]int{}
	var names []string
	for _, r := range s.tools {
		n := line(r.str("tool_name"), 40)
		if count[n] == 0 {
			names = append(names, n)
		}
		count[n]++
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s ×%d", n, count[n])
	}
	what := fmt.Sprintf("%d tool calls that are", len(s.tools))
	if len(s.tools) == 1 {
		what = "1 tool call that is"
	}
	return fmt.Sprintf("The store logs %s not in the saved conversation: %s.", what, strings.Join(parts, ", "))
}

// canonical is a JSON value with its object keys sorted, for comparing.
func canonical(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(bytes.TrimSpace(raw))
	}
	b, _ := json.Marshal(v)
	return string(b)
}
