package codex

import (
	"encoding/json"
	"strings"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/tools"
)

// A rollout is the file Codex keeps of each thread,
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl: one
// {"timestamp","type","payload"} line per record. Its response_item lines
// are what the model saw and said (the same in every release since the
// format began); its event_msg lines say when turns start and end and what
// they cost, and repeat the items in the app's words (item_completed),
// which perch reads only for what the model's items lack: a command's exit
// code and whether the user declined it.

// rolloutSilent are the kinds of line that are bookkeeping: the turn's
// settings, the context Codex tracks, usage records that token_count
// repeats.
var rolloutSilent = map[string]bool{
	"world_state": true, "token_usage_record": true,
}

// eventSilent are event_msg kinds perch does not show: the app's copies of
// response items, and settings.
var eventSilent = map[string]bool{
	"item_started": true, "item_updated": true, "thread_settings_applied": true,
	"user_message": true, "agent_message": true, "agent_reasoning": true, "agent_reasoning_raw_content": true,
	"agent_reasoning_section_break": true, "exec_command_begin": true, "exec_command_end": true,
	"patch_apply_begin": true, "patch_apply_end": true, "mcp_tool_call_begin": true, "mcp_tool_call_end": true,
	"web_search_begin": true, "web_search_end": true, "turn_diff": true, "session_configured": true,
	"entered_review_mode": true, "exited_review_mode": true, "context_compacted": true,
	"thread_name_updated": true, "thread_rolled_back": true,
}

// rolloutLine says whether o is a line of a rollout file.
func rolloutLine(o normalize.Object) bool {
	_, ok := o["payload"]
	return ok && normalize.StrField(o, "type") != ""
}

func (d *Decoder) rollout(pos string, o normalize.Object, raw []byte) []events.Event {
	typ := normalize.StrField(o, "type")
	p := normalize.AsObjectShared(o["payload"])
	if p == nil {
		return []events.Event{bad(pos, raw, "a rollout line whose payload is not an object")}
	}
	switch typ {
	case "session_meta":
		out := d.newRun()
		d.thread = normalize.FirstStr(p, "id", "session_id")
		return out
	case "response_item":
		return d.responseItem(pos, p)
	case "event_msg":
		return d.eventMsg(pos, p)
	case "compacted":
		return []events.Event{notice(events.LevelInfo, events.NoticeContext, "Codex compacted the conversation.")}
	case "turn_context":
		// The turn's settings: only the model is news (once, and when it
		// changes).
		if m := normalize.StrField(p, "model"); m != "" && m != d.model {
			d.model = m
			return []events.Event{{Kind: events.KindModelLoaded, Model: m}}
		}
		return nil
	}
	if rolloutSilent[typ] {
		return nil
	}
	return d.unknownKind(typ)
}

// unknownKind notes a kind of line perch does not know. Such lines are
// left out; one notice names them all: at the end of an import, or, live,
// when the first one comes.
func (d *Decoder) unknownKind(kind string) []events.Event {
	for _, k := range d.unknown {
		if k == kind {
			return nil
		}
	}
	if len(d.unknown) < 20 {
		d.unknown = append(d.unknown, kind)
	}
	if !d.Live || d.unknownShown {
		return nil
	}
	d.unknownShown = true
	return []events.Event{d.unknownNotice()}
}

func (d *Decoder) unknownNotice() events.Event {
	return notice(events.LevelInfo, events.NoticeInfo,
		"Codex wrote lines of kinds perch does not know, left out: "+strings.Join(d.unknown, ", "))
}

func (d *Decoder) eventMsg(pos string, p normalize.Object) []events.Event {
	typ := normalize.StrField(p, "type")
	switch typ {
	case "task_started", "turn_started":
		return d.startTurn()
	case "task_complete", "turn_complete":
		out := d.finishTurn(d.takeUsage(), events.StopEndTurn)
		return append(out, d.endTurn()...)
	case "turn_aborted":
		if s := d.last; s != nil && s.usage == nil {
			s.usage = d.takeUsage()
		}
		return d.legacy(pos, p)
	case "token_count":
		// The thread's running total: a turn's usage is read off it when
		// the turn ends (takeUsage), so that a record repeated for a rate
		// limit update counts once.
		if info := normalize.AsObjectShared(p["info"]); info != nil {
			if u := usage(info["total_token_usage"]); u != nil {
				d.total = u
			}
		}
		return nil
	case "item_completed":
		d.noteItem(normalize.AsObjectShared(p["item"]))
		return nil
	case "error", "stream_error", "background_event", "plan_update",
		"exec_approval_request", "apply_patch_approval_request":
		return d.legacy(pos, p)
	}
	if eventSilent[typ] {
		return nil
	}
	return d.unknownKind("event_msg " + typ)
}

// takeUsage is the usage of the turn that ends, from the last running
// total reported in it (nil when no request was made).
func (d *Decoder) takeUsage() *events.Usage {
	u := d.total
	d.total = nil
	if u == nil {
		return nil
	}
	return d.turnUsage(u)
}

// commandEnd is what the app recorded of a finished command.
type commandEnd struct {
	exit     *int
	declined bool
}

// noteItem keeps what an item_completed adds to the model's items: a
// command's exit code and whether it was declined, for its output.
func (d *Decoder) noteItem(it normalize.Object) {
	if normalize.StrField(it, "type") != "CommandExecution" {
		return
	}
	var end commandEnd
	if v, ok := normalize.Int(it["exit_code"]); ok {
		e := int(v)
		end.exit = &e
	}
	end.declined = normalize.StrField(it, "status") == "declined"
	if d.ends == nil {
		d.ends = map[string]commandEnd{}
	}
	d.ends[normalize.StrField(it, "id")] = end
}

func (d *Decoder) responseItem(pos string, p normalize.Object) []events.Event {
	typ := normalize.StrField(p, "type")
	switch typ {
	case "message":
		return d.rolloutMessage(p)
	case "reasoning":
		key := d.key(normalize.StrField(p, "id"))
		text := partsText(p["summary"])
		if text == "" {
			text = partsText(p["content"])
		}
		if text == "" {
			return nil // encrypted reasoning only: nothing to show
		}
		s := d.segFor(key, partThinking)
		pc := s.piece(key)
		pc.b.Reset()
		pc.b.WriteString(text)
		return []events.Event{s.show()}
	case "function_call":
		args := json.RawMessage(normalize.StrField(p, "arguments"))
		if !json.Valid(args) {
			args = object("arguments", p["arguments"])
		}
		_, out := d.toolCall(d.key(normalize.FirstStr(p, "call_id", "id")), normalize.StrField(p, "name"), args)
		return out
	case "custom_tool_call":
		_, out := d.toolCall(d.key(normalize.FirstStr(p, "call_id", "id")), normalize.StrField(p, "name"), object("input", p["input"]))
		return out
	case "local_shell_call":
		action := normalize.AsObjectShared(p["action"])
		_, out := d.toolCall(d.key(normalize.FirstStr(p, "call_id", "id")), tools.CodexShell, object("command", action["command"], "cwd", action["working_directory"]))
		return out
	case "web_search_call":
		t, out := d.toolCall(d.key(normalize.StrField(p, "id")), tools.CodexWebSearch, object("action", p["action"]))
		return append(out, t.result("", normalize.StrField(p, "status") == "failed", "", nil))
	case "function_call_output", "custom_tool_call_output":
		return d.toolOutput(pos, p)
	case "ghost_snapshot":
		return nil // Codex's undo bookkeeping
	case "compaction", "compaction_summary":
		return []events.Event{notice(events.LevelInfo, events.NoticeContext, "Codex compacted the conversation.")}
	}
	return d.unknownKind("response_item " + typ)
}

// rolloutMessage reads a message item: the model's reply, the user's
// words, or what Codex itself put into the prompt (its instructions, the
// environment, AGENTS.md), which is shown as Codex's, never as the user's.
func (d *Decoder) rolloutMessage(p normalize.Object) []events.Event {
	text := partsText(p["content"])
	id := normalize.StrField(p, "id")
	switch role := normalize.StrField(p, "role"); {
	case role == "assistant":
		key := d.key(id)
		s := d.segFor(key, partText)
		s.setText("item "+key, text)
		return []events.Event{s.show()}
	case role == "user" && !harness(p, text):
		out := d.closeSeg()
		if id == "" {
			id = d.synthID()
		} else {
			id = d.key(id)
		}
		return append(out, events.Event{Kind: events.KindUserMessage, ID: id, Text: text})
	}
	return []events.Event{notice(events.LevelInfo, events.NoticeHost, "Codex added to the prompt: "+harnessSummary(p, text))}
}

// harness says whether a user-role message is Codex's own: its provenance
// (newer releases record one per part) names no user, or, without one, the
// text is one of the wrappers Codex puts around what it adds.
func harness(p normalize.Object, text string) bool {
	meta := normalize.AsObjectShared(p["internal_chat_message_metadata_passthrough"])
	if parts := normalize.AsListShared(meta["content_item_metadata"]); len(parts) > 0 {
		for _, part := range parts {
			prov := normalize.AsObjectShared(normalize.AsObjectShared(part)["provenance"])
			if normalize.StrField(prov, "type") == "user" {
				return false
			}
		}
		return true
	}
	t := strings.TrimSpace(text)
	for _, w := range []string{"<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
		"<turn_aborted>", "<user_shell_command>", "<subagent_notification>"} {
		if strings.HasPrefix(t, w) {
			return true
		}
	}
	return false
}

// harnessSummary names what Codex added: the kinds it recorded, else the
// text's first line.
func harnessSummary(p normalize.Object, text string) string {
	meta := normalize.AsObjectShared(p["internal_chat_message_metadata_passthrough"])
	var kinds []string
	for _, k := range normalize.AsListShared(meta["content_item_kinds"]) {
		if s := normalize.Str(k); s != "" {
			kinds = append(kinds, s)
		}
	}
	if len(kinds) > 0 {
		return strings.Join(kinds, ", ")
	}
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if len(line) > 120 {
		line = strings.ToValidUTF8(line[:120], "") + "…"
	}
	return line
}

// toolOutput reads a tool's result. A multi-part result (text and images)
// keeps its parts apart, a paragraph each.
func (d *Decoder) toolOutput(pos string, p normalize.Object) []events.Event {
	key := d.key(normalize.StrField(p, "call_id"))
	t := d.tools[key]
	if t == nil {
		// A result with no call recorded: shown as what it is, not as a
		// call perch would have to invent.
		return []events.Event{notice(events.LevelInfo, events.NoticeInfo,
			"A tool result for a call the file does not have ("+key+"): "+normalize.Excerpt(p["output"]))}
	}
	text, isErr := outputText(p["output"])
	end, known := d.ends[key]
	delete(d.ends, key)
	errText := ""
	if known && end.declined {
		isErr, errText = true, "the command was declined"
	}
	if known && end.exit != nil && *end.exit != 0 {
		isErr = true
	}
	return []events.Event{t.result(text, isErr, errText, end.exit)}
}

// outputText reads a function output: a string, a list of content parts,
// or (older releases) {"content", "success"}.
func outputText(raw json.RawMessage) (string, bool) {
	if o := normalize.AsObjectShared(raw); o != nil {
		text, _ := outputText(o["content"])
		ok, known := normalize.Bool(o["success"])
		return text, known && !ok
	}
	if l := normalize.AsListShared(raw); l != nil {
		var parts []string
		for _, part := range l {
			po := normalize.AsObjectShared(part)
			switch normalize.StrField(po, "type") {
			case "input_image", "image":
				parts = append(parts, "[image]")
			default:
				if s := normalize.ParsePart(part).Text; s != "" {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n\n"), false
	}
	return normalize.Str(raw), false
}

// partsText joins the text of a list of parts ({"type","text"}), a
// paragraph each.
func partsText(raw json.RawMessage) string {
	var parts []string
	for _, part := range normalize.AsListShared(raw) {
		if s := normalize.StrField(normalize.AsObjectShared(part), "text"); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n")
}

// rolloutKinds are the top-level kinds that tell a rollout file.
var rolloutKinds = map[string]bool{"session_meta": true, "response_item": true, "event_msg": true, "turn_context": true}
