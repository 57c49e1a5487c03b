package claudecode

import (
	"strings"
	"unicode/utf8"

	"github.com/perch-tui/perch/client/anthropic"
	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/tools"
)

// subagents shows what a subagent does under the Agent (or Task) call that
// started it, never as turns of the session: the lines of a subagent carry
// the id of that call in parent_tool_use_id, and its system task_* lines
// name it by tool_use_id. Each step becomes a line of the call's running
// output (an output delta), which the call's result replaces when it
// comes: the view shows the subagent at work inside the call, and the
// transcript keeps the call and its report. The subagent's prompt is in
// the call's arguments and is not shown again.
type subagents struct {
	calls      map[string]string // task_id → the call that started it
	background map[string]bool   // task_ids that run in the background
}

// line reads an assistant or user line of the subagent started by the
// call parent.
func (s *subagents) line(parent string, o normalize.Object, name string) []events.Event {
	m := normalize.AsObjectShared(o["message"])
	if m == nil {
		return nil
	}
	var b strings.Builder
	for _, raw := range contentList(m["content"]) {
		bo := normalize.AsObject(raw)
		switch normalize.StrField(bo, "type") {
		case "text":
			if normalize.StrField(o, "type") == "assistant" {
				b.WriteString(strings.TrimRight(normalize.StrField(bo, "text"), "\n") + "\n")
			}
		case "tool_use":
			call := normalize.StrField(bo, "name")
			args := anthropic.Marshal(bo["input"])
			b.WriteString("→ " + call)
			if a := tools.KeyArg(call, args, ""); a != "" {
				b.WriteString(" " + firstLine(a))
			}
			b.WriteString("\n")
		case "tool_result":
			r := anthropic.ParseContent(bo["content"]).Text
			mark := "← "
			if e, _ := normalize.Bool(bo["is_error"]); e {
				mark = "← error: "
			}
			b.WriteString(mark + firstLine(r) + "\n")
		}
	}
	return s.delta(parent, name, b.String())
}

// system reads a task_* line; background runs end with a notice, as their
// call's result came when they started.
func (s *subagents) system(sub string, o normalize.Object, name func(string) string) []events.Event {
	task := normalize.StrField(o, "task_id")
	call := normalize.StrField(o, "tool_use_id")
	if call == "" {
		call = s.calls[task]
	}
	switch sub {
	case "task_started":
		if task != "" && call != "" {
			if s.calls == nil {
				s.calls, s.background = make(map[string]string), make(map[string]bool)
			}
			s.calls[task] = call
			s.background[task], _ = normalize.Bool(o["is_backgrounded"])
		}
		text := "Subagent started"
		if t := normalize.StrField(o, "subagent_type"); t != "" {
			text = "Subagent " + t + " started"
		}
		return s.delta(call, name(call), text+"\n")
	case "task_notification":
		if !s.background[task] {
			return nil // its call's result reports it
		}
		text := "Background subagent"
		if d := normalize.StrField(o, "description"); d != "" {
			text += " " + d
		}
		if st := normalize.StrField(o, "status"); st != "" {
			text += " " + st
		}
		if sum := normalize.StrField(o, "summary"); sum != "" {
			text += ": " + sum
		}
		return []events.Event{anthropic.Notice(events.LevelInfo, events.NoticeProgress, text)}
	}
	return nil // task_progress, task_updated: the steps themselves show it
}

func (s *subagents) delta(call, name, text string) []events.Event {
	if call == "" || text == "" {
		return nil
	}
	return []events.Event{{Kind: events.KindToolOutputDelta,
		Tool: &events.ToolEvent{Call: events.ToolCall{ID: call, Name: name}, Name: name}, Text: text}}
}

// firstLine is s's first line, at most 200 bytes (the subagent's steps are
// a summary; its calls' whole outputs are in its own transcript).
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	more := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, more = s[:i], true
	}
	if len(s) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s, more = s[:cut], true
	}
	if more {
		s += " …"
	}
	return s
}
