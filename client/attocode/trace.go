package attocode

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/idset"
)

// The trace log of the TypeScript implementation: one record per line,
// {"_type", "_ts", "traceId", …}. What is conversation becomes turns:
//
//	task.start      {taskId, prompt}                  → the user's turn
//	llm.request     {requestId}                       → opens an assistant turn
//	llm.thinking    {requestId, thinking:{content}}   → its reasoning
//	llm.response    {requestId, tokens, cache, stopReason, toolCallCount}
//	                                                  → its usage and stop reason
//	tool.execution  {executionId, toolName, input, status, outputPreview?, errorMessage?}
//	                                                  → a tool call and its result
//	task.end        {status, result:{output?, failureReason?}}
//	                                                  → the reply's text, or an error
//
// The trace keeps no reply text except a task's final output, and tool
// output only as a preview of a few hundred characters. Errors, compaction
// and the session's start and end are notices; iteration.wrapper records
// (grouping markers) say nothing. Every other record type is shown as a
// notice by its name, runs of one type folded into one notice.

type traceState struct {
	open  map[string]bool // turns opened and not yet answered
	order []string        // the open turns in the order they opened (and some answered since)
	// opened is how many turns opened since the last flushTurns.
	opened int
	done   idset.Set // turns that got their response, in the whole file

	task      string // the current task's id
	last      string // the last response of the current task
	lastCalls int64  // how many tool calls that response asked for

	run    string // the record type of the pending run of notices
	runN   int
	runPos string
	runSum string

	ended bool // session.end was read
}

func newTraceState() traceState {
	return traceState{open: map[string]bool{}}
}

// openTurn opens turn id. order drops the turns answered since when it
// grows past twice the open ones, so that it holds what flushTurns may
// still end, not every turn of the file.
func (t *traceState) openTurn(id string) {
	t.open[id] = true
	t.order = append(t.order, id)
	t.opened++
	if len(t.order) > 2*len(t.open)+16 {
		t.order = slices.DeleteFunc(t.order, func(id string) bool { return !t.open[id] })
	}
}

func (d *Decoder) trace(pos string, o normalize.Object, raw []byte) []events.Event {
	t := &d.tr
	typ := normalize.StrField(o, "_type")
	var out []events.Event
	if typ != t.run {
		out = t.flushRun()
	}
	switch typ {
	case "":
		return append(out, badRecord(pos, raw, "a trace record without a type"))
	case "session.start":
		text := "Session started"
		if id := normalize.StrField(o, "sessionId"); id != "" {
			text = "Session " + id + " started"
		}
		if m := normalize.StrField(o, "model"); m != "" {
			text += " with " + m
		}
		if task := normalize.StrField(o, "task"); task != "" {
			text += ": " + task
		}
		return append(out, notice(events.NoticeInfo, text))
	case "session.end":
		t.ended = true
		status := normalize.StrField(o, "status")
		text := "Session ended"
		if status != "" {
			text += " (" + status + ")"
		}
		if ms, ok := normalize.Float(o["durationMs"]); ok {
			text += fmt.Sprintf(" after %.1f s", ms/1000)
		}
		if m := normalize.AsObjectShared(o["metrics"]); m != nil {
			if s := summary(m); s != "" {
				text += ": " + s
			}
		}
		ev := notice(events.NoticeInfo, text)
		if status == "failed" {
			ev.Level, ev.NoticeKind = events.LevelError, events.NoticeError
		}
		return append(out, ev)
	case "task.start":
		id := normalize.StrField(o, "taskId")
		if id == "" {
			id = "task-" + strconv.Itoa(d.n)
		}
		t.task, t.last, t.lastCalls = id, "", 0
		return append(out, events.Event{Kind: events.KindUserMessage, ID: id, Text: normalize.StrField(o, "prompt")})
	case "task.end":
		return append(out, t.taskEnd(o)...)
	case "llm.request":
		id := normalize.StrField(o, "requestId")
		if id == "" || t.open[id] || t.done.Has(id) {
			return out
		}
		t.openTurn(id)
		// Opens the turn where the request was made; its response
		// completes it.
		return append(out, events.Event{Kind: events.KindTextDelta, ID: id})
	case "llm.thinking":
		th := o["thinking"]
		text := normalize.Str(th)
		if tb := normalize.AsObjectShared(th); tb != nil {
			text = normalize.FirstStr(tb, "content", "text", "thinking")
		}
		id := normalize.StrField(o, "requestId")
		if id == "" {
			return append(out, events.Event{Kind: events.KindAssistantMessage,
				ID: "thinking-" + strconv.Itoa(d.n), Thinking: text})
		}
		if !t.open[id] && !t.done.Has(id) {
			t.openTurn(id)
		}
		return append(out, events.Event{Kind: events.KindThinkingDelta, ID: id, Thinking: text})
	case "llm.response":
		id := normalize.StrField(o, "requestId")
		if id == "" {
			id = "response-" + strconv.Itoa(d.n)
		}
		delete(t.open, id)
		t.done.Add(id)
		t.last = id
		t.lastCalls, _ = normalize.Int(o["toolCallCount"])
		return append(out, events.Event{Kind: events.KindAssistantMessage, ID: id,
			Usage: traceUsage(o), StopReason: normalize.Stop(normalize.StrField(o, "stopReason"))})
	case "tool.execution":
		return append(out, toolExecution(o, d.n))
	case "error":
		text := normalize.FirstStr(o, "errorMessage", "message")
		if code := normalize.StrField(o, "errorCode"); code != "" {
			text = code + ": " + text
		}
		if c := normalize.StrField(o, "context"); c != "" {
			text += " (" + c + ")"
		}
		ev := events.Event{Kind: events.KindNotice, Level: events.LevelError, NoticeKind: events.NoticeError,
			Text: events.Bound(text)}
		if rec, ok := normalize.Bool(o["recoverable"]); ok && rec {
			ev.Level = events.LevelWarning
		}
		return append(out, ev)
	case "context.compacted":
		text := "Context compacted"
		before, ok1 := normalize.Int(o["tokensBefore"])
		after, ok2 := normalize.Int(o["tokensAfter"])
		if ok1 && ok2 {
			text += fmt.Sprintf(": %d → %d tokens", before, after)
		}
		if v, _ := normalize.Bool(o["recoveryInjected"]); v {
			text += " (recovery context injected)"
		}
		return append(out, notice(events.NoticeContext, text))
	case "iteration.wrapper":
		return out
	}
	if t.run == typ {
		t.runN++
		return out
	}
	t.run, t.runN, t.runPos = typ, 1, pos
	t.runSum = summary(o, "_type", "_ts", "traceId")
	return out
}

// flushRun emits the pending run of records shown only by name.
func (t *traceState) flushRun() []events.Event {
	if t.runN == 0 {
		t.run = ""
		return nil
	}
	name := events.Excerpt([]byte(t.run), 60)
	text := name
	if t.runN > 1 {
		text = fmt.Sprintf("%s ×%d", name, t.runN)
	}
	if t.runSum != "" {
		text += ": " + t.runSum
	}
	t.run, t.runN, t.runSum = "", 0, ""
	return []events.Event{notice(events.NoticeInfo, text)}
}

// flushTurns ends the turns whose response never came: the trace stops
// inside them.
func (t *traceState) flushTurns() []events.Event {
	var out []events.Event
	for _, id := range t.order {
		if t.open[id] {
			out = append(out, events.Event{Kind: events.KindAssistantMessage, ID: id, Incomplete: true})
			delete(t.open, id)
		}
	}
	t.order, t.opened = nil, 0
	return out
}

// taskEnd: the task's output is the text of its last reply when that
// reply asked for no tools (it was the answer); otherwise it is a reply of
// its own. A failure is an error notice.
func (t *traceState) taskEnd(o normalize.Object) []events.Event {
	var out []events.Event
	res := normalize.AsObjectShared(o["result"])
	if text := normalize.StrField(res, "output"); text != "" {
		id := t.last
		if id == "" || t.lastCalls > 0 || t.open[id] {
			id = t.task + ":result"
			if t.task == "" {
				id = "result-" + strconv.Itoa(t.done.Len()+t.opened)
			}
		}
		out = append(out, events.Event{Kind: events.KindAssistantMessage, ID: id, Text: text})
	}
	status := normalize.StrField(o, "status")
	if why := normalize.StrField(res, "failureReason"); why != "" || status == "failed" {
		text := "Task failed"
		if why != "" {
			text += ": " + why
		}
		out = append(out, events.Event{Kind: events.KindNotice, Level: events.LevelError,
			NoticeKind: events.NoticeError, Text: events.Bound(text)})
	} else if status == "cancelled" {
		out = append(out, notice(events.NoticeInfo, "Task cancelled."))
	}
	t.task, t.last, t.lastCalls = "", "", 0
	return out
}

// toolExecution is a tool call with its result. The trace keeps only a
// preview of the output (the source cuts it to a few hundred characters)
// and the arguments with long values shortened.
func toolExecution(o normalize.Object, n int) events.Event {
	id := normalize.StrField(o, "executionId")
	if id == "" {
		id = "exec-" + strconv.Itoa(n)
	}
	name := normalize.StrField(o, "toolName")
	call := events.NewToolCall(id, name, o["input"])
	res := &events.ToolResult{Text: normalize.StrField(o, "outputPreview")}
	switch status := strings.ToLower(normalize.StrField(o, "status")); status {
	case "success", "ok", "":
	default:
		res.IsError = true
		res.ErrorText = normalize.StrField(o, "errorMessage")
		if res.ErrorText == "" {
			res.ErrorText = status
		}
	}
	return events.Event{Kind: events.KindPostToolCall,
		Tool: &events.ToolEvent{Call: call, Name: name, Result: res}}
}

// traceUsage reads llm.response's tokens {input, output} and cache
// {cacheReadTokens, cacheWriteTokens}. The trace counts input as the whole
// prompt (it derives its fresh tokens as input − cache reads); an input
// smaller than the cache counts can only have left the cache out, and is
// then added to it.
func traceUsage(o normalize.Object) *events.Usage {
	tok := normalize.AsObjectShared(o["tokens"])
	cache := normalize.AsObjectShared(o["cache"])
	in, okIn := normalize.Int(tok["input"])
	out, okOut := normalize.Int(tok["output"])
	read, okRead := normalize.Int(cache["cacheReadTokens"])
	write, okWrite := normalize.Int(cache["cacheWriteTokens"])
	if !okIn && !okOut && !okRead && !okWrite {
		return nil
	}
	u := &events.Usage{InputTokens: in, OutputTokens: out, CachedTokens: read}
	if in < read+write {
		u.InputTokens = in + read + write
	}
	u.TotalTokens = u.InputTokens + u.OutputTokens
	if okWrite {
		u.CacheWriteTokens, u.HasCacheWrite = write, true
	}
	for _, k := range []string{"actualCost", "cost"} {
		if c, ok := normalize.Float(o[k]); ok {
			u.CostUSD, u.HasCost = c, true
			break
		}
	}
	return u
}
