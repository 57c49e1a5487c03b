package codex

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/tools"
)

// item reads a thread item at any point of its life.
func (d *Decoder) item(pos string, final bool, raw json.RawMessage) []events.Event {
	it := normalize.AsObjectShared(raw)
	if it == nil {
		return []events.Event{bad(pos, raw, "an item that is not an object")}
	}
	key := d.key(normalize.StrField(it, "id"))
	typ := normalize.FirstStr(it, "type", "item_type")
	status := normalize.StrField(it, "status")
	done := final || status == "completed" || status == "failed" || status == "declined"
	switch typ {
	case "agent_message", "assistant_message", "plan":
		s := d.segFor(key, partText)
		s.setText("item "+key, normalize.StrField(it, "text"))
		s.incomplete = !final
		return []events.Event{s.show()}
	case "reasoning":
		s := d.segFor(key, partThinking)
		p := s.piece(key)
		p.b.Reset()
		p.b.WriteString(normalize.FirstStr(it, "text", "summary", "content"))
		return []events.Event{s.show()}
	case tools.CodexCommandItem:
		args := object("command", it["command"], "cwd", it["cwd"])
		t, out := d.toolCall(key, tools.CodexShell, args)
		text := normalize.StrField(it, "aggregated_output")
		if !done {
			return append(out, d.snapshot(t, text)...)
		}
		var exit *int
		if v, ok := normalize.Int(it["exit_code"]); ok {
			e := int(v)
			exit = &e
		}
		errText := ""
		if status == "declined" {
			errText = "the command was declined"
		}
		isErr := status == "failed" || status == "declined" || (exit != nil && *exit != 0)
		return append(out, t.result(text, isErr, errText, exit))
	case tools.CodexFileChangeItem:
		t, out := d.toolCall(key, tools.CodexApplyPatch, object("changes", it["changes"]))
		if !done {
			return out
		}
		// No output comes with a file change: its changes, one a line
		// ("update calc/add.go"), say what it did.
		var lines []string
		for _, c := range normalize.AsListShared(it["changes"]) {
			o := normalize.AsObjectShared(c)
			lines = append(lines, strings.TrimSpace(normalize.StrField(o, "kind")+" "+normalize.StrField(o, "path")))
		}
		summary := strings.Join(lines, "\n")
		if status == "failed" {
			return append(out, t.result("", true, strings.TrimSpace("the patch was not applied:\n"+summary), nil))
		}
		return append(out, t.result(summary, false, "", nil))
	case "mcp_tool_call":
		name := normalize.StrField(it, "tool")
		if srv := normalize.StrField(it, "server"); srv != "" {
			name = srv + "." + name
		}
		t, out := d.toolCall(key, name, it["arguments"])
		if !done {
			return out
		}
		text, isErr, errText := mcpResult(it["result"])
		if e := errorText(it["error"]); e != "" {
			isErr, errText = true, e
		}
		isErr = isErr || status == "failed"
		return append(out, t.result(text, isErr, errText, nil))
	case tools.CodexWebSearchItem:
		args := object("query", it["query"], "action", it["action"])
		t, out := d.toolCall(key, tools.CodexWebSearch, args)
		if !done {
			return out
		}
		out = append(out, d.updateArgs(t, args)...)
		return append(out, t.result("", false, "", nil))
	case "collab_tool_call":
		t, out := d.toolCall(key, "collab."+normalize.StrField(it, "tool"),
			object("receiver_thread_ids", it["receiver_thread_ids"], "prompt", it["prompt"]))
		if !done {
			return out
		}
		return append(out, t.result(agentStates(it["agents_states"]), status == "failed", "", nil))
	case tools.CodexTodoItem:
		var todos []events.Todo
		for i, raw := range normalize.AsListShared(it["items"]) {
			o := normalize.AsObjectShared(raw)
			st := "pending"
			if v, _ := normalize.Bool(o["completed"]); v {
				st = "completed"
			}
			todos = append(todos, events.Todo{ID: strconv.Itoa(i + 1), Content: normalize.StrField(o, "text"), Status: st})
		}
		return []events.Event{{Kind: events.KindTodoUpdated, Todos: todos}}
	case "error":
		if d.noted.Has(key) && key != "" {
			return nil
		}
		d.noted.Add(key)
		return []events.Event{notice(events.LevelWarning, events.NoticeError, normalize.StrField(it, "message"))}
	case "user_message":
		if d.noted.Has(key) && key != "" {
			return nil
		}
		d.noted.Add(key)
		text := normalize.StrField(it, "text")
		if text == "" {
			text = normalize.ParseContent(it["content"]).Text
		}
		return []events.Event{{Kind: events.KindUserMessage, ID: key, Text: text}}
	}
	if d.noted.Has(key) && key != "" {
		return nil
	}
	d.noted.Add(key)
	return []events.Event{notice(events.LevelInfo, events.NoticeInfo, ingest.BadRecord(pos, raw, "an unknown codex item "+strconv.Quote(typ)))}
}

// object builds a JSON object of the given keys and values, leaving out
// absent, null and empty-string ones (nil when none is left).
func object(kv ...any) json.RawMessage {
	o := map[string]json.RawMessage{}
	for i := 0; i+1 < len(kv); i += 2 {
		v, _ := kv[i+1].(json.RawMessage)
		if !normalize.IsNull(v) && string(v) != `""` {
			o[kv[i].(string)] = v
		}
	}
	if len(o) == 0 {
		return nil
	}
	b, _ := json.Marshal(o)
	return b
}

// mcpResult reads an MCP tool result: {content, structured_content} (or
// the older {"Ok": {content, isError}} / {"Err": "…"}).
func mcpResult(raw json.RawMessage) (text string, isErr bool, errText string) {
	r := normalize.AsObjectShared(raw)
	if r == nil {
		return "", false, ""
	}
	if e, ok := r["Err"]; ok {
		msg := normalize.Str(e)
		if msg == "" {
			msg = normalize.Excerpt(e)
		}
		return "", true, msg
	}
	if ok := normalize.AsObjectShared(r["Ok"]); ok != nil {
		r = ok
	}
	text = normalize.ParseContent(r["content"]).Text
	if text == "" {
		for _, k := range []string{"structured_content", "structuredContent"} {
			if v := r[k]; !normalize.IsNull(v) {
				text = compactJSON(v)
				break
			}
		}
	}
	for _, k := range []string{"is_error", "isError"} {
		if v, ok := normalize.Bool(r[k]); ok {
			isErr = v
		}
	}
	return text, isErr, ""
}

func compactJSON(raw json.RawMessage) string {
	s := string(raw)
	if c := events.NewToolCall("", "", raw); c.Args != nil {
		s = string(c.Args)
	}
	return strings.ToValidUTF8(s, "\uFFFD") // the raw JSON may hold invalid bytes
}

// agentStates lists a collab call's agents: "<thread>: <status> <message>".
func agentStates(raw json.RawMessage) string {
	o := normalize.AsObjectShared(raw)
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var lines []string
	for _, k := range keys {
		st := normalize.AsObjectShared(o[k])
		line := k + ": " + normalize.StrField(st, "status")
		if m := normalize.StrField(st, "message"); m != "" {
			line += " " + m
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
