package codex

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/tools"
)

// legacy reads the older `codex exec --json` event, {"id": <submission>,
// "msg": {"type": …, …}}: codex's own protocol events printed as they came.
// Their envelope id is shared by every event of a task, so turns get
// synthesized ids and tools their call ids.
func (d *Decoder) legacy(pos string, m normalize.Object) []events.Event {
	typ := normalize.StrField(m, "type")
	switch typ {
	case "task_started":
		return d.startTurn()
	case "task_complete":
		out := d.finishTurn(nil, events.StopEndTurn)
		return append(out, d.endTurn()...)
	case "turn_aborted":
		out := append(d.closeSeg(), d.flushRunning()...)
		if s := d.last; s != nil {
			s.stop = events.StopCancelled
			out = append(out, s.show())
		}
		out = append(out, events.Event{Kind: events.KindCancelled})
		if r := normalize.StrField(m, "reason"); r != "" && r != "interrupted" {
			out = append(out, notice(events.LevelInfo, events.NoticeInfo, "The turn was aborted: "+r))
		}
		d.inTurn, d.seg, d.last = false, nil, nil
		return out

	case "agent_message":
		s := d.seg
		if s == nil || s.textItem != "delta" || len(s.calls) > 0 {
			s = d.segFor("", partText)
		}
		s.setText("message", normalize.StrField(m, "message")) // the whole form of what streamed
		return []events.Event{s.show()}
	case "agent_message_delta":
		s := d.seg
		if s == nil || s.textItem != "delta" || len(s.calls) > 0 {
			s = d.segFor("", partText)
		}
		delta := normalize.StrField(m, "delta")
		s.text.WriteString(delta)
		s.textItem = "delta"
		return d.grown(s, events.Event{Kind: events.KindTextDelta, ID: s.id, Text: delta})
	case "agent_reasoning", "agent_reasoning_raw_content":
		s := d.segFor("", partThinking)
		p := lastDelta(s)
		if p == nil {
			p = &piece{}
			s.pieces = append(s.pieces, p)
		}
		p.item = typ // the whole form of what streamed, if anything did
		p.b.Reset()
		p.b.WriteString(normalize.StrField(m, "text"))
		return []events.Event{s.show()}
	case "agent_reasoning_delta", "agent_reasoning_raw_content_delta":
		s := d.segFor("", partThinking)
		p := lastDelta(s)
		if p == nil {
			p = &piece{item: "delta"}
			s.pieces = append(s.pieces, p)
		}
		delta := normalize.StrField(m, "delta")
		p.b.WriteString(delta)
		return d.grown(s, events.Event{Kind: events.KindThinkingDelta, ID: s.id, Thinking: delta})
	case "agent_reasoning_section_break":
		if s := d.seg; s != nil {
			if p := lastDelta(s); p != nil {
				p.item = "section"
			}
		}
		return nil

	case "exec_command_begin":
		_, out := d.toolCall(d.key(normalize.StrField(m, "call_id")), tools.CodexShell,
			object("command", m["command"], "cwd", m["cwd"]))
		return out
	case "exec_command_output_delta":
		t, out := d.toolCall(d.key(normalize.StrField(m, "call_id")), tools.CodexShell, nil)
		text := chunkText(m["chunk"])
		t.buf.WriteString(text)
		if text == "" || !d.Live {
			return out
		}
		return append(out, outputDelta(t, text))
	case "exec_command_end":
		t, out := d.toolCall(d.key(normalize.StrField(m, "call_id")), tools.CodexShell, object("command", m["command"]))
		text := normalize.StrField(m, "aggregated_output")
		if _, ok := m["aggregated_output"]; !ok {
			text = normalize.StrField(m, "stdout") + normalize.StrField(m, "stderr")
		}
		var exit *int
		if v, ok := normalize.Int(m["exit_code"]); ok {
			e := int(v)
			exit = &e
		}
		return append(out, t.result(text, exit != nil && *exit != 0, "", exit))
	case "patch_apply_begin":
		_, out := d.toolCall(d.key(normalize.StrField(m, "call_id")), tools.CodexApplyPatch, object("changes", m["changes"]))
		return out
	case "patch_apply_end":
		t, out := d.toolCall(d.key(normalize.StrField(m, "call_id")), tools.CodexApplyPatch, nil)
		text := normalize.StrField(m, "stdout") + normalize.StrField(m, "stderr")
		ok, known := normalize.Bool(m["success"])
		return append(out, t.result(text, known && !ok, "", nil))
	case "mcp_tool_call_begin", "mcp_tool_call_end":
		inv := normalize.AsObjectShared(m["invocation"])
		name := normalize.StrField(inv, "tool")
		if srv := normalize.StrField(inv, "server"); srv != "" {
			name = srv + "." + name
		}
		t, out := d.toolCall(d.key(normalize.StrField(m, "call_id")), name, inv["arguments"])
		if typ == "mcp_tool_call_begin" {
			return out
		}
		text, isErr, errText := mcpResult(m["result"])
		return append(out, t.result(text, isErr, errText, nil))
	case "web_search_begin", "web_search_end":
		args := object("query", m["query"])
		t, out := d.toolCall(d.key(normalize.StrField(m, "call_id")), tools.CodexWebSearch, args)
		if typ == "web_search_begin" {
			return out
		}
		out = append(out, d.updateArgs(t, args)...)
		return append(out, t.result("", false, "", nil))
	case "plan_update":
		var todos []events.Todo
		for i, raw := range normalize.AsListShared(m["plan"]) {
			o := normalize.AsObjectShared(raw)
			todos = append(todos, events.Todo{ID: strconv.Itoa(i + 1), Content: normalize.StrField(o, "step"),
				Status: normalize.StrField(o, "status")})
		}
		out := []events.Event{{Kind: events.KindTodoUpdated, Todos: todos}}
		if e := normalize.StrField(m, "explanation"); e != "" {
			out = append(out, notice(events.LevelInfo, events.NoticeInfo, "Plan: "+e))
		}
		return out
	case "token_count":
		raw := json.RawMessage(nil)
		if info := normalize.AsObjectShared(m["info"]); info != nil {
			raw = info["last_token_usage"]
			if normalize.IsNull(raw) {
				raw = info["total_token_usage"]
			}
		} else if has(m, "input_tokens") || has(m, "output_tokens") {
			raw, _ = json.Marshal(m)
		}
		u := usage(raw)
		if u == nil {
			return nil
		}
		// The usage of one model request: it belongs to the assistant
		// turn that request produced, which it closes.
		s := d.seg
		if s == nil {
			s = d.last
		}
		var out []events.Event
		if s == nil || s.usage != nil {
			out = d.closeSeg()
			s = &segment{id: d.synthID()}
			d.last = s
		}
		s.usage = u
		out = append(out, s.show())
		if d.seg == s {
			d.seg = nil
		}
		return out

	case "user_message":
		text := normalize.StrField(m, "message")
		if k := normalize.StrField(m, "kind"); k != "" && k != "plain" {
			return []events.Event{notice(events.LevelInfo, events.NoticeContext, k+": "+text)}
		}
		if d.promptShown && text == d.prompt {
			d.promptShown = false // the echo of the prompt line
			return nil
		}
		d.promptShown = false
		return []events.Event{{Kind: events.KindUserMessage, ID: d.synthID(), Text: text}}
	case "error":
		return []events.Event{notice(events.LevelError, events.NoticeError, normalize.StrField(m, "message"))}
	case "stream_error":
		return []events.Event{notice(events.LevelWarning, events.NoticeError, normalize.StrField(m, "message"))}
	case "background_event":
		return []events.Event{notice(events.LevelInfo, events.NoticeProgress, normalize.StrField(m, "message"))}
	case "exec_approval_request", "apply_patch_approval_request":
		what := normalize.StrField(m, "reason")
		if c := m["command"]; c != nil {
			what = strings.TrimSpace(commandText(c) + " " + what)
		}
		return []events.Event{notice(events.LevelWarning, events.NoticeInfo, "codex asks for approval: "+what)}
	case "session_configured", "turn_diff", "get_history_entry_response", "mcp_list_tools_response",
		"list_custom_prompts_response", "shutdown_complete", "conversation_path":
		// Bookkeeping, repeated elsewhere or of no use in a transcript.
		return nil
	}
	raw, _ := json.Marshal(m)
	return []events.Event{notice(events.LevelInfo, events.NoticeInfo, ingest.BadRecord(pos, raw, "an unknown codex event "+strconv.Quote(typ)))}
}

// lastDelta is the reasoning piece still being streamed, if any.
func lastDelta(s *segment) *piece {
	if n := len(s.pieces); n > 0 && s.pieces[n-1].item == "delta" {
		return s.pieces[n-1]
	}
	return nil
}

// chunkText is a command output chunk: base64 of the bytes (or the bytes
// as a list of numbers).
func chunkText(raw json.RawMessage) string {
	if s, ok := stringValue(raw); ok {
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			return strings.ToValidUTF8(string(b), "\uFFFD")
		}
		return s
	}
	var nums []int
	if json.Unmarshal(raw, &nums) != nil {
		return ""
	}
	b := make([]byte, len(nums))
	for i, n := range nums {
		b[i] = byte(n)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// commandText is a command given as a string or an argv list.
func commandText(raw json.RawMessage) string {
	if s, ok := stringValue(raw); ok {
		return s
	}
	var argv []string
	if json.Unmarshal(raw, &argv) == nil {
		return strings.Join(argv, " ")
	}
	return normalize.Excerpt(raw)
}
