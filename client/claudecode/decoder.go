// Package claudecode reads the output of Claude Code's print mode
// (`claude -p --output-format stream-json --verbose`, with or without
// --include-partial-messages, and `--output-format json`): one JSON
// object per line, each a system, assistant, user, result or stream_event
// message.
package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perch-tui/perch/client/anthropic"
	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/idset"
	"github.com/perch-tui/perch/tools"
)

// Decoder turns stream-json lines into events. It is per stream and
// stateful: feed the lines in order, then call Flush once.
//
// Claude Code writes one assistant line per content block, all under the
// message id of the API reply they belong to; the Decoder merges them into
// one turn (a line whose content repeats the blocks so far replaces them
// instead). The turn is emitted as soon as its first block is known and
// again, whole, as blocks arrive (same id: the timeline updates it in
// place); its final form, with the usage, follows when the message ends:
// when the stream says message_stop, when another message starts, at the
// result line, or at Flush.
//
// stream_event lines (--include-partial-messages) go through the
// Anthropic stream decoder: its usage (the cumulative output count) and
// stop reason complete the turn of the same id; a message known only from
// the stream is emitted as the stream built it.
type Decoder struct {
	// Deltas emits text and thinking deltas of stream_event lines as they
	// arrive (live views). Off, only turns are emitted.
	Deltas bool

	stream *anthropic.Decoder
	// turns are the latest messages by id (keptTurns of them, oldest
	// first in turnOrder): a message's lines come together, and one is
	// reported again soon after at most (an interrupted turn), so a
	// day-long transcript need not keep every turn's blocks.
	turns     map[string]*turn
	turnOrder []string
	open      *turn // the message whose lines are arriving
	last      *turn // the latest assistant turn
	tools     anthropic.Tools
	ids       idset.Set       // turn and user ids given out
	n         int             // synthesized ids given out
	told      map[string]bool // unknown types already shown
	todos     todoCalls       // TodoWrite calls waiting for their results
	tasks     taskList        // the Task* tools' list
	sub       subagents       // subagent runs, shown under their Agent call

	// apiError is the text of the API error notice a synthetic message
	// gave, so that the result line does not repeat it.
	apiError string
	// denied are the tool calls whose permission denial was shown.
	denied idset.Set
	// runUsageSeen: a reply of the current run carried its own usage, so
	// the result line's totals are not counted again.
	runUsageSeen bool
	// cuttable is the reply still arriving, the one an API error cuts
	// off: nil once a line said how it stopped, or once a user line (a
	// tool result, a prompt) showed that the next request is a new one.
	// An error never marks an earlier, finished turn.
	cuttable *turn
	// runUsage is the usage this run's replies carried (each counted in
	// the totals once), so that the result line adds only the rest.
	runUsage events.Usage
	// model is the model the last reply named (a ModelLoaded event says
	// so when it changes).
	model string
	// lineAt is the time of the line being read (zero without one).
	lineAt time.Time
}

// turn is one assistant message.
type turn struct {
	id        string
	at        time.Time // its first line's time
	blocks    []json.RawMessage
	parts     []normalize.Content // the blocks read, one each
	usage     anthropic.UsageMax
	streamUse *events.Usage
	// known is set when a line of the message carried its stop reason:
	// that line was written after the reply ended, so its usage is final.
	// Lines written block by block, before the reply ended, carry the
	// usage of message_start, whose output count is a placeholder.
	known      bool
	stop       string // normalized
	incomplete bool
	final      bool
	stream     *events.Event // the stream's form, when no line gave content
	// extras: the results of the server's tools and the notice of
	// unknown blocks the message holds were given (with its final form).
	extras bool
	// counted: its usage went into the run's (the timeline keeps a
	// turn's first usage only).
	counted bool
}

// NewDecoder returns a decoder that emits whole turns only.
func NewDecoder() *Decoder { return &Decoder{} }

// Decode reads one line.
func (d *Decoder) Decode(raw []byte) []events.Event { return d.DecodeAt("", raw) }

// DecodeAt reads one line; pos ("line 12") prefixes the notice of a line
// that does not decode.
func (d *Decoder) DecodeAt(pos string, raw []byte) []events.Event {
	// Split in place: what the decoder keeps (content blocks, usage, stream
	// events) it copies.
	o, why := anthropic.ObjectInPlace(raw)
	if o == nil {
		return []events.Event{anthropic.BadRecord(pos, raw, why)}
	}
	// A session file's lines carry when they were written: what a line
	// gives is dated by it (a view's time span, an item's time), a reply
	// by its first line.
	d.lineAt, _ = time.Parse(time.RFC3339Nano, normalize.StrField(o, "timestamp"))
	out := d.line(pos, raw, o)
	if len(out) == 0 {
		return out
	}
	for i := range out {
		if out[i].Created.IsZero() {
			out[i].Created = d.lineAt
		}
	}
	// The model that answered, once and again when it changes.
	if normalize.StrField(o, "type") == "assistant" && !isSynthetic(o) {
		if m := normalize.StrField(normalize.AsObjectShared(o["message"]), "model"); m != "" && m != d.model {
			d.model = m
			out = append([]events.Event{{Kind: events.KindModelLoaded, Model: m, Created: out[0].Created}}, out...)
		}
	}
	return out
}

// line decodes one parsed line.
func (d *Decoder) line(pos string, raw []byte, o normalize.Object) []events.Event {
	switch typ := normalize.StrField(o, "type"); typ {
	case "system":
		return d.system(pos, o)
	case "assistant":
		if parent := normalize.StrField(o, "parent_tool_use_id"); parent != "" {
			return d.sub.line(parent, o, d.tools.Name(parent))
		}
		if isSynthetic(o) {
			return d.synthetic(o)
		}
		return d.assistant(pos, raw, o)
	case "user":
		if parent := normalize.StrField(o, "parent_tool_use_id"); parent != "" {
			return d.sub.line(parent, o, d.tools.Name(parent))
		}
		return d.user(pos, raw, o)
	case "result":
		return d.result(o)
	case "stream_event":
		if normalize.StrField(o, "parent_tool_use_id") != "" {
			return nil // a subagent's reply: its assistant lines show it
		}
		return d.streamEvent(pos, raw, o)
	case "keep_alive":
		return nil
	case "queue-operation", "last-prompt", "tools-used", "atis-latch", "cost-state", "file-history-snapshot",
		"attachment", "mode", "summary", "custom-title", "agent-name", "pr-link":
		return nil // a session file's bookkeeping: not the conversation
	case "":
		return []events.Event{anthropic.BadRecord(pos, raw, "a line without a type")}
	default:
		if strings.HasPrefix(typ, "api-request") {
			return nil // bookkeeping of the requests made (api-request, api-request-start, …)
		}
		// Claude Code adds kinds of line often, nearly all bookkeeping:
		// they are left out, and one notice (the first) says so.
		if !d.once("unknown types") {
			return nil
		}
		return []events.Event{anthropic.Notice(events.LevelInfo, events.NoticeInfo,
			anthropic.At(pos, fmt.Sprintf("Claude Code line kind %q is not one perch knows; it and any other unknown kinds are left out", typ)))}
	}
}

// Flush ends the input: the stream's open message and the open turn are
// emitted (Incomplete when their stream was cut).
func (d *Decoder) Flush() []events.Event {
	var out []events.Event
	if d.stream != nil {
		out = append(out, d.fromStream(d.stream.Flush())...)
	}
	if d.open != nil {
		out = append(out, d.close(d.open)...)
	}
	return out
}

func (d *Decoder) once(key string) bool {
	if d.told[key] {
		return false
	}
	if d.told == nil {
		d.told = make(map[string]bool)
	}
	d.told[key] = true
	return true
}

// keptTurns is how many of the latest messages the decoder keeps by id.
const keptTurns = 256

// keepTurn remembers t as the message id, forgetting the oldest beyond
// keptTurns.
func (d *Decoder) keepTurn(id string, t *turn) {
	if d.turns == nil {
		d.turns = make(map[string]*turn)
	}
	if _, ok := d.turns[id]; !ok {
		d.turnOrder = append(d.turnOrder, id)
	}
	d.turns[id] = t
	if len(d.turnOrder) > keptTurns {
		delete(d.turns, d.turnOrder[0])
		d.turnOrder = append(d.turnOrder[:0], d.turnOrder[1:]...)
	}
}

// uniqueID is id (or prefix-N when empty), unique among the ids given out.
func (d *Decoder) uniqueID(id, prefix string) string {
	if id == "" {
		d.n++
		id = prefix + "-" + strconv.Itoa(d.n)
	}
	for base, n := id, 2; d.ids.Has(id); n++ {
		id = base + "#" + strconv.Itoa(n)
	}
	d.ids.Add(id)
	return id
}

func (d *Decoder) assistant(pos string, raw []byte, o normalize.Object) []events.Event {
	m := normalize.AsObjectShared(o["message"])
	if m == nil {
		return []events.Event{anthropic.BadRecord(pos, raw, "an assistant line without a message")}
	}
	id := normalize.StrField(m, "id")
	var out []events.Event
	t := d.turns[id]
	if id == "" || t == nil {
		if d.open != nil {
			out = append(out, d.close(d.open)...)
		}
		t = &turn{id: d.uniqueID(id, "assistant")}
		if id != "" {
			d.keepTurn(id, t)
		}
	} else if d.open != t && d.open != nil {
		out = append(out, d.close(d.open)...)
	}
	d.last = t
	if t.stream != nil && !t.stream.Incomplete {
		return out // the stream already gave this message whole
	}
	d.open = t
	if t.at.IsZero() {
		t.at = d.lineAt
	}
	t.merge(contentList(m["content"]))
	t.usage.Merge(m["usage"])
	if s := normalize.StrField(m, "stop_reason"); s != "" {
		t.stop = normalize.Stop(s)
		t.known = true
	}
	d.cuttable = t
	if t.known {
		d.cuttable = nil
	}
	t.final = false
	if len(t.blocks) > progressive {
		return out // a huge message: shown whole when it ends
	}
	return append(out, d.form(t, false)...)
}

// progressive is how many blocks a turn may have and still be emitted
// again at each new block; past it, re-emitting would cost quadratic work.
const progressive = 64

// contentList is a message's content as a list of blocks (a string is one
// text block).
func contentList(raw json.RawMessage) []json.RawMessage {
	if l := normalize.AsList(raw); l != nil { // a copy: turns keep their blocks
		return l
	}
	if normalize.IsNull(raw) {
		return nil
	}
	return []json.RawMessage{anthropic.Marshal(map[string]any{"type": "text", "text": normalize.ParseContent(raw).Text})}
}

// merge adds a line's blocks: a list that starts with the blocks so far
// replaces them (a cumulative copy), any other is appended (one more block).
func (t *turn) merge(list []json.RawMessage) {
	cumulative := len(list) > 1 && len(list) >= len(t.blocks) && len(t.blocks) > 0 || len(list) == 1 && len(t.blocks) == 1
	for i := 0; cumulative && i < len(t.blocks); i++ {
		cumulative = bytes.Equal(bytes.TrimSpace(list[i]), bytes.TrimSpace(t.blocks[i]))
	}
	if cumulative {
		// The blocks so far are read already.
		t.parts = t.parts[:len(t.blocks)]
		t.blocks = append(t.blocks[:0], list...)
		list = list[len(t.parts):]
	} else {
		t.blocks = append(t.blocks, list...)
	}
	for _, b := range list {
		t.parts = append(t.parts, anthropic.ParsePart(b))
	}
}

// form is the turn as it stands; final adds the usage (the timeline keeps
// the first usage a turn gets, so only the final form carries it).
func (d *Decoder) form(t *turn, final bool) []events.Event {
	var ev events.Event
	var c normalize.Content
	if t.stream != nil && len(t.blocks) == 0 {
		ev = *t.stream
	} else {
		for _, p := range t.parts {
			anthropic.JoinPart(&c, p)
		}
		ev = events.Event{Kind: events.KindAssistantMessage, ID: t.id, Text: c.Text,
			Thinking: c.Thinking, ToolCalls: c.ToolCalls}
		if final {
			ev.Usage = t.streamUse
			if ev.Usage == nil && t.known {
				ev.Usage = t.usage.Usage()
			}
		}
	}
	if ev.Usage != nil {
		d.runUsageSeen = true
		if !t.counted {
			t.counted = true
			d.runUsage.Add(ev.Usage)
		}
	}
	ev.StopReason = t.stop
	ev.Incomplete = t.incomplete
	if ev.Created.IsZero() {
		ev.Created = t.at
	}
	d.tools.Note(ev.ToolCalls)
	d.tasks.note(ev.ToolCalls)
	d.todos.note(ev.ToolCalls)
	out := []events.Event{ev}
	if final && !t.extras && len(t.blocks) > 0 {
		t.extras = true
		out = append(out, anthropic.ServerResults(c)...)
		if unknown := anthropic.UnknownBlocks(t.blocks); len(unknown) > 0 {
			out = append(out, anthropic.UnknownBlockNotice(unknown))
		}
	}
	return out
}

// close emits the final form of t once.
func (d *Decoder) close(t *turn) []events.Event {
	if d.open == t {
		d.open = nil
	}
	if t.final {
		return nil
	}
	t.final = true
	if t.stop == "" && !t.incomplete && d.hasCalls(t) {
		// The lines did not say (stop_reason null): a reply that asks for
		// tools stopped to have them run.
		t.stop = events.StopToolUse
	}
	return d.form(t, true)
}

func (d *Decoder) user(pos string, raw []byte, o normalize.Object) []events.Event {
	d.cuttable = nil
	m := normalize.AsObjectShared(o["message"])
	if m == nil {
		return []events.Event{anthropic.BadRecord(pos, raw, "a user line without a message")}
	}
	evs := anthropic.UserEvents(d.uniqueID(normalize.StrField(o, "uuid"), "user"), m["content"], &d.tools)
	evs = d.notTheUsers(o, evs)
	for _, ev := range evs {
		if ev.Kind != events.KindPostToolCall || ev.Tool.Name != tools.ClaudeBash || !ev.Tool.Result.IsError {
			continue
		}
		if n, ok := tools.ClaudeExitCode(ev.Tool.Result.Text); ok {
			ev.Tool.Result.ExitCode = &n
		}
	}
	for _, ev := range evs {
		if ev.Kind == events.KindPostToolCall {
			if todos := d.tasks.result(ev.Tool); todos != nil {
				evs = append(evs, events.Event{Kind: events.KindTodoUpdated, Todos: todos})
			}
			if todos, ok := d.todos.result(ev.Tool); ok {
				evs = append(evs, events.Event{Kind: events.KindTodoUpdated, Todos: todos})
			}
		}
	}
	return evs
}

func (d *Decoder) streamEvent(pos string, raw []byte, o normalize.Object) []events.Event {
	inner := normalize.AsObject(o["event"]) // a copy: the stream decoder keeps parts of it
	if inner == nil {
		return []events.Event{anthropic.BadRecord(pos, raw, "a stream_event line without an event")}
	}
	if d.stream == nil {
		d.stream = &anthropic.Decoder{Deltas: d.Deltas}
	}
	return d.fromStream(d.stream.DecodeObject(pos, inner))
}

// fromStream passes the stream decoder's events on; its turns complete the
// turns the assistant lines built.
func (d *Decoder) fromStream(evs []events.Event) []events.Event {
	var out []events.Event
	for _, e := range evs {
		if e.Kind != events.KindAssistantMessage {
			out = append(out, e)
			continue
		}
		t := d.turns[e.ID]
		if t != nil && len(t.blocks) > 0 {
			if e.Usage != nil {
				t.streamUse = e.Usage
			}
			if e.StopReason != "" {
				t.stop = e.StopReason
			}
			t.incomplete = e.Incomplete
			if t.final {
				out = append(out, d.form(t, true)...)
			} else {
				out = append(out, d.close(t)...)
			}
			continue
		}
		if t == nil {
			t = &turn{id: d.uniqueID(e.ID, "assistant")}
			d.keepTurn(e.ID, t)
			e.ID = t.id
		}
		ev := e
		t.stream, t.stop, t.incomplete, t.streamUse, t.final = &ev, e.StopReason, e.Incomplete, e.Usage, true
		d.cuttable = nil // the stream ended it (cut, or stopped)
		if d.open == t {
			d.open = nil
		}
		d.last = t
		out = append(out, d.form(t, true)...)
	}
	return out
}

func (d *Decoder) system(pos string, o normalize.Object) []events.Event {
	info := func(kind, text string) []events.Event {
		return []events.Event{anthropic.Notice(events.LevelInfo, kind, text)}
	}
	switch sub := normalize.StrField(o, "subtype"); sub {
	case "init":
		var parts []string
		if m := normalize.StrField(o, "model"); m != "" {
			parts = append(parts, "model "+m)
		}
		if c := normalize.StrField(o, "cwd"); c != "" {
			parts = append(parts, "in "+c)
		}
		if t := normalize.AsList(o["tools"]); t != nil {
			parts = append(parts, count(int64(len(t)), "tool"))
		}
		if p := normalize.StrField(o, "permissionMode"); p != "" {
			parts = append(parts, "permission mode "+p)
		}
		text := "Claude Code session"
		if s := normalize.StrField(o, "session_id"); s != "" {
			text += " " + s
		}
		if v := normalize.StrField(o, "claude_code_version"); v != "" {
			text += " (version " + v + ")"
		}
		if len(parts) > 0 {
			text += ": " + strings.Join(parts, ", ")
		}
		out := info(events.NoticeInfo, text)
		for _, s := range normalize.AsList(o["mcp_servers"]) {
			so := normalize.AsObject(s)
			if st := normalize.StrField(so, "status"); st != "" && st != "connected" {
				out = append(out, anthropic.Notice(events.LevelWarning, events.NoticeHost,
					fmt.Sprintf("MCP server %s: %s", normalize.StrField(so, "name"), st)))
			}
		}
		return out
	case "compact_boundary":
		text := "Context compacted"
		if md := normalize.AsObject(o["compact_metadata"]); md != nil {
			var parts []string
			if tr := normalize.StrField(md, "trigger"); tr != "" {
				parts = append(parts, tr)
			}
			if n, ok := normalize.Int(md["pre_tokens"]); ok {
				parts = append(parts, fmt.Sprintf("from %d tokens", n))
			}
			if len(parts) > 0 {
				text += " (" + strings.Join(parts, ", ") + ")"
			}
		}
		return info(events.NoticeContext, text)
	case "api_retry":
		text := "API request failed"
		if s, ok := normalize.Int(o["error_status"]); ok {
			text += fmt.Sprintf(" (status %d)", s)
		}
		if e := normalize.FirstStr(o, "error", "message"); e != "" {
			text += ": " + e
		}
		if a, ok := normalize.Int(o["attempt"]); ok {
			text += fmt.Sprintf("; retry %d", a)
			if m, ok := normalize.Int(o["max_retries"]); ok {
				text += fmt.Sprintf(" of %d", m)
			}
		}
		if ms, ok := normalize.Int(o["retry_delay_ms"]); ok {
			text += fmt.Sprintf(" in %d ms", ms)
		}
		return []events.Event{anthropic.Notice(events.LevelWarning, events.NoticeProgress, text)}
	case "api_error": // session files: a failed request, retried
		text := "API request failed"
		if e := normalize.AsObject(o["error"]); e != nil {
			if f := normalize.FirstStr(e, "formatted", "message"); f != "" {
				text += ": " + f
			}
		}
		if a, ok := normalize.Int(o["retryAttempt"]); ok {
			text += fmt.Sprintf("; retry %d", a)
			if m, ok := normalize.Int(o["maxRetries"]); ok {
				text += fmt.Sprintf(" of %d", m)
			}
		}
		return []events.Event{anthropic.Notice(events.LevelWarning, events.NoticeProgress, text)}
	case "permission_denied":
		return d.denial(normalize.StrField(o, "tool_use_id"), normalize.StrField(o, "tool_name"),
			nil, normalize.StrField(o, "message"))
	case "status":
		// "requesting", then null: live progress of each request. Only a
		// compaction is worth a line.
		if normalize.StrField(o, "status") == "compacting" {
			return info(events.NoticeContext, "Compacting the context")
		}
		return nil
	case "thinking_tokens", "background_tasks_changed":
		return nil // live estimates and bookkeeping: the turns and tools show what they count
	case "task_started", "task_progress", "task_updated", "task_notification":
		return d.sub.system(sub, o, d.tools.Name)
	default:
		// Progress of some kind perch has no words for: say what the line
		// says, or name it once.
		if what := normalize.FirstStr(o, "description", "message", "summary", "status"); what != "" {
			return []events.Event{anthropic.Notice(events.LevelInfo, events.NoticeProgress, "Claude Code "+sub+": "+what)}
		}
		if !d.once("system " + sub) {
			return nil
		}
		return []events.Event{anthropic.Notice(events.LevelInfo, events.NoticeProgress, "Claude Code "+sub)}
	}
}

// denial is the warning that a tool call was not allowed to run, once per
// call (the system line says it when it happens, the result line lists
// them all again).
func (d *Decoder) denial(id, tool string, input json.RawMessage, message string) []events.Event {
	if id != "" && d.denied.Seen(id) {
		return nil
	}
	text := "Permission denied: " + tool
	if a := tools.KeyArg(tool, input, ""); a != "" {
		text += " " + firstLine(a)
	}
	if message != "" {
		text += " (" + message + ")"
	}
	return []events.Event{anthropic.Notice(events.LevelWarning, events.NoticeHost, text)}
}

// notTheUsers shows the user-role lines Claude Code wrote itself as what
// they are. A line marked isMeta or isSynthetic (a command's output, a
// caveat, an interruption) is a host notice, never the user's words. A
// message from a peer (origin.kind "peer": sent through the messaging
// socket by another program, perch included) keeps its user turn, which
// is the receipt of its delivery, after a notice naming where it came
// from: it was not typed in the session's terminal.
func (d *Decoder) notTheUsers(o normalize.Object, evs []events.Event) []events.Event {
	origin := normalize.AsObjectShared(o["origin"])
	peer := normalize.StrField(origin, "kind") == "peer"
	meta, _ := normalize.Bool(o["isMeta"])
	synthetic, _ := normalize.Bool(o["isSynthetic"])
	if !peer && !meta && !synthetic {
		return evs
	}
	out := make([]events.Event, 0, len(evs)+1)
	for _, ev := range evs {
		switch {
		case ev.Kind != events.KindUserMessage:
			out = append(out, ev)
		case peer:
			from := normalize.FirstStr(origin, "from", "name", "sender")
			if from == "" {
				from = normalize.FirstStr(o, "from")
			}
			if from == "" {
				from = "another program"
			}
			out = append(out, anthropic.Notice(events.LevelInfo, events.NoticeHost,
				"A message from "+from+", sent through Claude Code's messaging socket:"), ev)
		default:
			out = append(out, anthropic.Notice(events.LevelInfo, events.NoticeHost, "Claude Code: "+ev.Text))
		}
	}
	return out
}

// isSynthetic: an assistant line Claude Code wrote itself, not the model
// (an API error, an interruption).
func isSynthetic(o normalize.Object) bool {
	return normalize.StrField(normalize.AsObject(o["message"]), "model") == "<synthetic>"
}

// synthetic reads a message of Claude Code's own: an API error is an error
// notice with its HTTP status, and the reply it cut off is incomplete;
// anything else a notice of the host.
func (d *Decoder) synthetic(o normalize.Object) []events.Event {
	m := normalize.AsObjectShared(o["message"])
	text := anthropic.ParseContent(m["content"]).Text
	status, hasStatus := normalize.Int(o["api_error_status"])
	isAPI, _ := normalize.Bool(o["is_api_error_message"])
	if !isAPI && !hasStatus && !strings.HasPrefix(text, "API Error") {
		return []events.Event{anthropic.Notice(events.LevelInfo, events.NoticeHost, text)}
	}
	var out []events.Event
	if d.stream != nil {
		out = append(out, d.fromStream(d.stream.Flush())...)
	}
	if d.open != nil {
		out = append(out, d.close(d.open)...) // its lines all came: the reply it began is the cut one
	}
	if cut := d.cuttable; cut != nil && !cut.incomplete {
		// The reply still arriving: the error cut it off (when the
		// stream of the failed request had begun a message, the stream's
		// end marked it already).
		cut.incomplete = true
		out = append(out, d.form(cut, true)...)
	}
	d.apiError = text
	what := "API error"
	var about []string
	if hasStatus {
		about = append(about, fmt.Sprintf("HTTP %d", status))
	}
	if t := normalize.StrField(o, "api_error_type"); t != "" {
		about = append(about, t)
	}
	if len(about) > 0 {
		what += " (" + strings.Join(about, ", ") + ")"
	}
	msg := strings.TrimPrefix(text, "API Error: ")
	if hasStatus {
		msg = strings.TrimPrefix(msg, strconv.FormatInt(status, 10)+" ")
	}
	return append(out, anthropic.Notice(events.LevelError, events.NoticeError, what+": "+msg))
}

// result ends a run: the last turn gets its stop reason, and a notice says
// how the run ended with its totals (they cover the whole run, so they are
// not any one turn's usage). A run with no assistant line at all (the
// json output format) shows its result text as the one turn, with the
// run's usage and cost.
func (d *Decoder) result(o normalize.Object) []events.Event {
	var out []events.Event
	if d.stream != nil {
		out = append(out, d.fromStream(d.stream.Flush())...)
	}
	if d.open != nil {
		out = append(out, d.close(d.open)...)
	}
	sub := normalize.StrField(o, "subtype")
	isErr, _ := normalize.Bool(o["is_error"])
	failed := isErr || (sub != "" && sub != "success")
	stop := ""
	if failed && d.apiError == "" {
		// (An API error marked the reply it cut off already.)
		stop = resultStop(sub)
	}
	for _, raw := range normalize.AsList(o["permission_denials"]) {
		pd := normalize.AsObject(raw)
		out = append(out, d.denial(normalize.StrField(pd, "tool_use_id"), normalize.StrField(pd, "tool_name"),
			anthropic.Marshal(pd["tool_input"]), "")...)
	}
	usage := normalize.Usage(o["usage"])
	if c, ok := normalize.Float(o["total_cost_usd"]); ok {
		if usage == nil {
			usage = &events.Usage{}
		}
		usage.CostUSD, usage.HasCost = c, true
	}
	text := normalize.StrField(o, "result")
	switch {
	case d.last == nil && text != "":
		if stop == "" {
			stop = events.StopEndTurn
		}
		out = append(out, events.Event{Kind: events.KindAssistantMessage,
			ID: d.uniqueID(normalize.StrField(o, "uuid"), "result"), Text: text, Usage: usage, StopReason: stop})
		if usage != nil {
			d.runUsage.Add(usage)
		}
	case d.last != nil:
		if stop == "" && d.last.stop == "" && !d.hasCalls(d.last) {
			stop = events.StopEndTurn
		}
		if stop != "" && stop != d.last.stop {
			d.last.stop = stop
			out = append(out, d.form(d.last, true)...)
		}
	}
	total := runTotals(o["modelUsage"])
	shown := usage
	if total != nil {
		shown = total
	}
	n := resultNotice(o, sub, failed, shown, d.apiError)
	switch {
	case total != nil:
		// modelUsage is every request of the run, subagents' included,
		// with their cost: the run's totals are that, one scope (the
		// result's usage is the main conversation's alone, its cost
		// everyone's). What the replies counted already is taken off.
		rest := *total
		rest.Sub(&d.runUsage)
		for _, c := range []*int64{&rest.InputTokens, &rest.OutputTokens, &rest.CachedTokens, &rest.TotalTokens,
			&rest.CacheWriteTokens, &rest.ReasoningTokens} {
			*c = max(*c, 0)
		}
		n.Usage = &rest
	case !d.runUsageSeen && d.last != nil:
		// No reply of this run said its usage (stream-json without partial
		// messages prints each block before the reply's usage is known):
		// the result's totals are the run's, counted once.
		n.Usage = usage
	}
	d.runUsageSeen = false
	d.runUsage = events.Usage{}
	return append(out, n)
}

// runTotals sums a result line's modelUsage, the tokens and cost of every
// request of the run by model (subagents included); nil without one.
// Its input counts exclude the cache, as the API's do; a form without the
// cache counts (older releases) is not used.
func runTotals(raw json.RawMessage) *events.Usage {
	models := normalize.AsObject(raw)
	if len(models) == 0 {
		return nil
	}
	names := make([]string, 0, len(models))
	for k := range models {
		names = append(names, k)
	}
	sort.Strings(names) // a fixed order: the cost is a float sum
	var u events.Usage
	for _, name := range names {
		m := normalize.AsObject(models[name])
		if _, ok := m["cacheReadInputTokens"]; !ok {
			return nil // an older form without the cache: not the run's whole count
		}
		in, _ := normalize.Int(m["inputTokens"])
		read, _ := normalize.Int(m["cacheReadInputTokens"])
		write, _ := normalize.Int(m["cacheCreationInputTokens"])
		out, _ := normalize.Int(m["outputTokens"])
		u.InputTokens += in + read + write
		u.CachedTokens += read
		u.CacheWriteTokens += write
		u.OutputTokens += out
		if c, ok := normalize.Float(m["costUSD"]); ok {
			u.CostUSD += c
			u.HasCost = true
		}
	}
	u.HasCacheWrite = true
	u.TotalTokens = u.InputTokens + u.OutputTokens
	return &u
}

func (d *Decoder) hasCalls(t *turn) bool {
	if t.stream != nil && len(t.blocks) == 0 {
		return len(t.stream.ToolCalls) > 0
	}
	for _, b := range t.blocks {
		if normalize.StrField(normalize.AsObject(b), "type") == "tool_use" {
			return true
		}
	}
	return false
}

// resultStop maps a failed result's subtype to a stop reason.
func resultStop(sub string) string {
	switch {
	case strings.HasPrefix(sub, "error_max_"):
		return events.StopTerminated
	case sub == "error_during_execution", sub == "success", sub == "":
		return events.StopError
	}
	if s := normalize.Stop(sub); s != events.StopOther {
		return s
	}
	return events.StopError
}

// resultNotice says how the run ended; told is an error the notices said
// already, not repeated.
func resultNotice(o normalize.Object, sub string, failed bool, u *events.Usage, told string) events.Event {
	var parts []string
	if n, ok := normalize.Int(o["num_turns"]); ok {
		parts = append(parts, count(n, "turn"))
	}
	if ms, ok := normalize.Float(o["duration_ms"]); ok {
		parts = append(parts, strconv.FormatFloat(ms/1000, 'f', 1, 64)+" s")
	}
	if u != nil {
		if u.HasCost {
			parts = append(parts, events.CostText(u.CostUSD))
		}
		if u.InputTokens > 0 || u.OutputTokens > 0 {
			parts = append(parts, fmt.Sprintf("%d input tokens (%d cached), %d output tokens",
				u.InputTokens, u.CachedTokens, u.OutputTokens))
		}
	}
	details := ""
	if len(parts) > 0 {
		details = " (" + strings.Join(parts, ", ") + ")"
	}
	if !failed {
		return anthropic.Notice(events.LevelInfo, events.NoticeInfo, "Run finished"+details+".")
	}
	what := sub
	if what == "" || what == "success" {
		what = "an error"
	}
	text := "Run ended with " + what + details
	var why []string
	if r := normalize.StrField(o, "result"); r != "" && r != told {
		why = append(why, r)
	}
	for _, e := range normalize.AsList(o["errors"]) {
		if s := normalize.Str(e); s != "" {
			why = append(why, s)
		} else if eo := normalize.AsObject(e); eo != nil {
			why = append(why, normalize.FirstStr(eo, "message", "error", "type"))
		}
	}
	if len(why) > 0 {
		text += ": " + strings.Join(why, "; ")
	}
	return anthropic.Notice(events.LevelError, events.NoticeError, text)
}

// count is "1 turn", "3 turns".
func count(n int64, unit string) string {
	if n != 1 {
		unit += "s"
	}
	return strconv.FormatInt(n, 10) + " " + unit
}
