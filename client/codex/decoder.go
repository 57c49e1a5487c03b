// Package codex reads the JSON lines that `codex exec --json` prints (the
// thread/turn/item events, and the older {"id","msg":{…}} events), into
// perch's normalized events. See docs/formats/codex.md.
package codex

import (
	"encoding/json"
	"github.com/perch-tui/perch/internal/idset"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/internal/jsonx"
)

// Decoder turns codex exec events into normalized events. Codex reports a
// turn as separate items (reasoning, messages, commands, file changes, …);
// the decoder gathers consecutive items into assistant turns: reasoning
// and the message that follows it, and the tool calls made after them,
// form one turn, and the next reasoning or message after a tool call or a
// message starts another. A turn is emitted when it appears and again
// (same id, which the timeline merges) when it changes; tool calls added
// to a turn already shown come as PreToolCall events and the turn's list
// of calls is brought up to date once, when it closes. Feed it records in
// file order, then call Flush.
type Decoder struct {
	// Live makes the decoder report streamed text, reasoning and command
	// output as it grows (delta events), as a live view wants. A file
	// import leaves it off: each turn and each output then comes whole,
	// and the output of a command that never finished comes once, when
	// its turn ends.
	Live bool

	run     int
	thisRun idset.Set // item ids this run used
	earlier idset.Set // item ids used by earlier runs
	used    idset.Set // turn ids given out

	turns  int
	inTurn bool
	seg    *segment // the turn items join now
	last   *segment // the last turn of the current codex turn
	out    []events.Event

	itemSeg map[string]*segment // message/reasoning item → its turn
	tools   map[string]*tool    // tool item (or call id) → its state
	running []*tool             // tools of this turn without a result
	noted   idset.Set           // items already reported
	msgs    int

	prompt      string // the last user prompt shown (legacy), to drop its echo
	promptShown bool

	// thread is the codex thread of the current run; totals holds, per
	// thread, the running total its last completed turn reported: codex
	// reports a turn's usage as the thread's total so far, which after
	// `codex exec resume` includes the turns of the earlier runs.
	thread string
	totals map[string]events.Usage

	// failure is the message of this turn's last error event: the
	// turn.failed that repeats it says nothing new.
	failure string

	// Rollout files: the thread's last running total of tokens
	// (token_count), what the app recorded of finished commands by call
	// id, and the kinds of line perch does not know.
	total        *events.Usage
	ends         map[string]commandEnd
	unknown      []string
	unknownShown bool
	// model is the model the last turn_context named.
	model string
}

// NewDecoder returns a decoder at the start of a file.
func NewDecoder() *Decoder {
	return &Decoder{itemSeg: map[string]*segment{}, tools: map[string]*tool{},
		totals: map[string]events.Usage{}}
}

// Decode reads one record (a line of `codex exec --json`). pos names its
// place in the file for notices ("line 12").
func (d *Decoder) Decode(pos string, raw []byte) []events.Event {
	evs := d.decode(pos, raw)
	if len(d.out) > 0 { // the close of a turn, found while placing this record
		evs = append(d.out, evs...)
		d.out = nil
	}
	return evs
}

func (d *Decoder) decode(pos string, raw []byte) []events.Event {
	o := normalize.AsObjectShared(raw) // the decoder keeps nothing of a record
	if o == nil {
		why := "not a JSON object"
		if !jsonx.Valid(raw) {
			why = "not JSON"
		}
		return []events.Event{bad(pos, raw, why)}
	}
	if rolloutLine(o) {
		out := d.rollout(pos, o, raw)
		// A rollout's lines say when they were written: what a line gives
		// is dated by it (a view's time span, an item's time).
		if at, err := time.Parse(time.RFC3339Nano, normalize.StrField(o, "timestamp")); err == nil {
			for i := range out {
				if out[i].Created.IsZero() {
					out[i].Created = at
				}
			}
		}
		return out
	}
	if m := normalize.AsObjectShared(o["msg"]); m != nil {
		return d.legacy(pos, m)
	}
	typ := normalize.StrField(o, "type")
	switch typ {
	case "thread.started", "session.created":
		out := d.newRun()
		d.thread = normalize.FirstStr(o, "thread_id", "session_id")
		return out
	case "turn.started":
		return d.startTurn()
	case "turn.completed":
		out := d.finishTurn(d.turnUsage(usage(o["usage"])), events.StopEndTurn)
		return append(out, d.endTurn()...)
	case "turn.failed":
		msg := errorText(o["error"])
		var out []events.Event
		if msg == "" || msg != d.failure { // else the error event just said it
			out = append(out, notice(events.LevelError, events.NoticeError, "The turn failed: "+msg))
		}
		if d.last != nil {
			out = append(out, d.finishTurn(nil, events.StopError)...)
		}
		return append(out, d.endTurn()...)
	case "item.started", "item.updated", "item.completed":
		return d.item(pos, typ == "item.completed", o["item"])
	case "item.plan.delta":
		key := d.key(normalize.StrField(o, "item_id"))
		s := d.segFor(key, partText)
		delta := normalize.StrField(o, "delta")
		if delta == "" {
			return nil
		}
		s.text.WriteString(delta)
		s.textItem = "item " + key
		return d.grown(s, events.Event{Kind: events.KindTextDelta, ID: s.id, Text: delta})
	case "request_user_input":
		var qs []string
		for _, q := range normalize.AsListShared(o["questions"]) {
			if s := normalize.FirstStr(normalize.AsObjectShared(q), "question", "header", "id"); s != "" {
				qs = append(qs, s)
			}
		}
		return []events.Event{notice(events.LevelInfo, events.NoticeInfo, "The agent asks for input: "+strings.Join(qs, " / "))}
	case "error":
		msg := errorText(o["message"]) + errorText(o["error"])
		if reconnecting.MatchString(msg) {
			// Codex retrying a model request: progress, not a failure
			// (the turn fails, if it does, with an error of its own).
			return []events.Event{notice(events.LevelInfo, events.NoticeProgress, msg)}
		}
		d.failure = msg
		return []events.Event{notice(events.LevelError, events.NoticeError, msg)}
	case "":
		return d.untyped(pos, raw, o)
	}
	return []events.Event{notice(events.LevelInfo, events.NoticeInfo, ingest.BadRecord(pos, raw, "an unknown codex event "+strconv.Quote(typ)))}
}

// untyped reads the lines that have neither type nor msg: the prompt and
// the settings summary the older format printed first.
func (d *Decoder) untyped(pos string, raw []byte, o normalize.Object) []events.Event {
	if p, ok := o["prompt"]; ok && len(o) == 1 {
		text := normalize.Str(p)
		d.prompt, d.promptShown = text, true
		return []events.Event{{Kind: events.KindUserMessage, ID: d.synthID(), Text: text}}
	}
	var kv []string
	for k, v := range o {
		s, ok := stringValue(v)
		if !ok {
			kv = nil
			break
		}
		kv = append(kv, k+": "+s)
	}
	if len(kv) > 0 && (has(o, "model") || has(o, "workdir") || has(o, "sandbox")) {
		sort.Strings(kv)
		out := d.newRun()
		return append(out, notice(events.LevelInfo, events.NoticeInfo, "codex settings: "+strings.Join(kv, ", ")))
	}
	return []events.Event{notice(events.LevelInfo, events.NoticeInfo, ingest.BadRecord(pos, raw, "not a codex event, shown as is"))}
}

func stringValue(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	return normalize.Str(raw), true
}

// errorText reads an error given as a string or as {"message"}.
func errorText(raw json.RawMessage) string {
	if normalize.IsNull(raw) {
		return ""
	}
	if s := normalize.Str(raw); s != "" {
		return s
	}
	if o := normalize.AsObjectShared(raw); o != nil {
		if m := normalize.FirstStr(o, "message", "error"); m != "" {
			return m
		}
	}
	return normalize.Excerpt(raw)
}

// reconnecting is how codex words the retry of a model request
// ("Reconnecting... 2/5 (…)").
var reconnecting = regexp.MustCompile(`^Reconnecting(\.\.\.|…) \d+/\d+`)

// turnUsage is the usage of the turn that just completed, from the
// thread's running total u that codex reports: the total less the one the
// thread's previous turn in this file reported. A total smaller than that
// in any count is not a running total and is taken as it is.
func (d *Decoder) turnUsage(u *events.Usage) *events.Usage {
	if u == nil || d.thread == "" {
		return u
	}
	prev, ok := d.totals[d.thread]
	d.totals[d.thread] = *u
	if !ok || !covers(u, &prev) {
		return u
	}
	diff := *u
	diff.Sub(&prev)
	return &diff
}

// covers says whether total can be a running total that includes prev.
func covers(total, prev *events.Usage) bool {
	return total.InputTokens >= prev.InputTokens && total.OutputTokens >= prev.OutputTokens &&
		total.CachedTokens >= prev.CachedTokens && total.TotalTokens >= prev.TotalTokens &&
		total.CacheWriteTokens >= prev.CacheWriteTokens && total.ReasoningTokens >= prev.ReasoningTokens
}

// usage reads codex token counts: input_tokens is the whole prompt and
// cached_input_tokens the part of it read from the cache (OpenAI's
// meaning); reasoning_output_tokens, when given, is part of output_tokens.
func usage(raw json.RawMessage) *events.Usage {
	u := normalize.Usage(raw)
	if u == nil {
		return nil
	}
	o := normalize.AsObjectShared(raw)
	if v, ok := normalize.Int(o["cached_input_tokens"]); ok && v > u.CachedTokens {
		u.CachedTokens = v
	}
	if v, ok := normalize.Int(o["reasoning_output_tokens"]); ok && !u.HasReasoning {
		u.ReasoningTokens, u.HasReasoning = v, true
	}
	if v, ok := normalize.Int(o["cache_write_input_tokens"]); ok && !u.HasCacheWrite {
		u.CacheWriteTokens, u.HasCacheWrite = v, true
	}
	return u
}

func has(o normalize.Object, key string) bool {
	_, ok := o[key]
	return ok
}

func notice(level events.NoticeLevel, kind, text string) events.Event {
	return events.Event{Kind: events.KindNotice, Level: level, NoticeKind: kind, Text: text}
}

func bad(pos string, raw []byte, why string) events.Event {
	return notice(events.LevelWarning, events.NoticeError, ingest.BadRecord(pos, raw, why))
}
