package maria

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/jsonx"
)

// Text is never cut here: a tool output, a message or an argument string
// is kept byte for byte however large (what an event may cost is bounded by
// the reader, see ReadFrames), and exports print it whole. Only views (the
// TUI, Markdown) shorten, when they show it.
const (
	// MaxStructured is the largest legacy structured result kept raw in
	// ToolResult.Structured; its details are parsed whatever its size.
	MaxStructured = 4 << 20
	// excerptLen is how much of bad data a notice quotes.
	excerptLen = 160
)

// Decode turns one SSE frame into an Event. It never fails and never
// panics: data that does not decode becomes a KindInvalid event whose Notice
// carries a short excerpt, so the stream goes on.
//
// Only the event names maria sends are read (see TaskStreamName and
// DaemonStreamName). Any other frame, including one without an `event:`
// line (an SSE "message"), is KindForeign whatever its data holds: maria's
// own web client listens to its named events only, and perch must be no
// easier to spoof.
func Decode(f events.Frame) (ev events.Event) {
	defer func() {
		if r := recover(); r != nil {
			ev = invalid(f, fmt.Sprintf("decoder error: %v", r))
			if DaemonStreamName(f.Name) {
				ev.Dialect = events.DialectDaemon
			}
		}
	}()
	switch f.Name {
	case "maria":
		return decodeMaria(f)
	case "maria.queued_messages.synchronized":
		return decodeSnapshot(f)
	case "daemon.tasks.synchronized":
		tasks, err := ParseTasks(f.Data)
		if err != nil {
			return daemonInvalid(f, err.Error())
		}
		return events.Event{Kind: events.KindTasksSynced, Dialect: events.DialectDaemon, Variant: f.Name, Fingerprint: fingerprint(f), Tasks: tasks}
	case "daemon.task.changed":
		var w struct {
			Task json.RawMessage `json:"task"`
		}
		if err := json.Unmarshal(f.Data, &w); err != nil || len(w.Task) == 0 {
			return daemonInvalid(f, "daemon.task.changed without a task")
		}
		task, err := ParseTask(w.Task)
		if err != nil {
			return daemonInvalid(f, err.Error())
		}
		return events.Event{Kind: events.KindTaskChanged, Dialect: events.DialectDaemon, Variant: f.Name, Fingerprint: fingerprint(f), Task: &task}
	case "auth.status.changed", "auth.login.completed", "auth.login.failed":
		return decodeAuth(f)
	}
	return foreign(f)
}

// TaskStreamName reports whether maria sends events named name on a task
// stream (GET /task/{id}/events).
func TaskStreamName(name string) bool {
	return name == "maria" || name == "maria.queued_messages.synchronized"
}

// DaemonStreamName reports whether maria sends events named name on the
// daemon stream (GET /events).
func DaemonStreamName(name string) bool {
	switch name {
	case "daemon.tasks.synchronized", "daemon.task.changed",
		"auth.status.changed", "auth.login.completed", "auth.login.failed":
		return true
	}
	return false
}

// foreign is a frame maria would not send: its Notice names the frame, never
// its data, which may impersonate a conversation.
func foreign(f events.Frame) events.Event {
	what := "a frame without an event name"
	if f.Name != "" {
		what = fmt.Sprintf("event %s", events.ForeignName(f.Name))
	}
	return events.Event{Kind: events.KindForeign, Variant: f.Name, Fingerprint: fingerprint(f),
		Notice: fmt.Sprintf("%s (%d bytes of data)", what, len(f.Data))}
}

// daemonInvalid is invalid for the daemon stream's events.
func daemonInvalid(f events.Frame, why string) events.Event {
	ev := invalid(f, why)
	ev.Dialect = events.DialectDaemon
	return ev
}

func invalid(f events.Frame, why string) events.Event {
	return events.Event{Kind: events.KindInvalid, Variant: f.Name, Fingerprint: fingerprint(f),
		Notice: fmt.Sprintf("%s: %s", why, events.Excerpt(bytes.TrimSpace(f.Data), excerptLen))}
}

// fingerprint identifies an event that has no id, so a replay can be
// recognised (see Timeline.Reconnected).
func fingerprint(f events.Frame) uint64 {
	h := fnv.New64a()
	h.Write([]byte(f.Name))
	h.Write([]byte{0})
	h.Write(f.Data)
	return h.Sum64()
}

func decodeSnapshot(f events.Frame) events.Event {
	data := bytes.TrimSpace(f.Data)
	if len(data) > 0 && data[0] == '{' {
		// Tolerate {"queued_messages":[…]} or {"messages":[…]}.
		var w struct {
			Q json.RawMessage `json:"queued_messages"`
			M json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(data, &w) == nil {
			if w.Q != nil {
				data = w.Q
			} else if w.M != nil {
				data = w.M
			}
		}
	}
	if jsonx.IsNull(data) {
		data = []byte("[]")
	}
	q, err := ParseQueuedMessages(data)
	if err != nil {
		return invalid(f, "queued-messages snapshot is not a list")
	}
	return events.Event{Kind: events.KindQueueSnapshot, Dialect: events.DialectHead, Variant: f.Name, Queue: q}
}

func decodeAuth(f events.Frame) events.Event {
	var w struct {
		Provider      string `json:"provider"`
		Authenticated bool   `json:"authenticated"`
		Message       string `json:"message"`
	}
	if err := json.Unmarshal(f.Data, &w); err != nil {
		return daemonInvalid(f, "auth event does not decode")
	}
	return events.Event{Kind: events.KindAuth, Dialect: events.DialectDaemon, Variant: f.Name, Fingerprint: fingerprint(f), Auth: &events.Auth{
		Event: strings.TrimPrefix(f.Name, "auth."), Provider: w.Provider,
		Authenticated: w.Authenticated, Message: w.Message,
	}}
}

// wireEvent is one maria event as wireEvent.read reads it: the HEAD envelope
// {"id","created","desc":{…}} or the flat docs shape {"id","msg",…}.
// Every field stays raw, a slice of the frame's data read later and once
// (see jsonx.Unquote), so that a wrong type in one field only spoils that
// field.
type wireEvent struct {
	ID      jsonx.Raw
	Created jsonx.Raw
	desc    wireDesc // HEAD: the desc object, when hasDesc
	hasDesc bool
	flat    wireDesc // docs: the members beside id and created
}

// wireDesc is what a variant of maria's event may carry, by its key.
type wireDesc struct {
	Msg         jsonx.Raw // msg
	ID          jsonx.Raw // id
	Name        jsonx.Raw // name
	Model       jsonx.Raw // model
	Prompt      jsonx.Raw // prompt
	Tool        jsonx.Raw // tool
	Message     jsonx.Raw // message
	Content     jsonx.Raw // content
	ToolCalls   jsonx.Raw // tool_calls
	Usage       jsonx.Raw // usage
	ToolCall    jsonx.Raw // tool_call
	Args        jsonx.Raw // args
	Result      jsonx.Raw // result
	Error       jsonx.Raw // error
	Text        jsonx.Raw // text
	TokenCount  jsonx.Raw // token_count
	OriginCount jsonx.Raw // origin_token_count
	PrunedCount jsonx.Raw // pruned_token_count
	Todos       jsonx.Raw // todos
}

// read reads data, the bytes of one event, into w with jsonx, the one
// reader of maria's envelope: jsonx.Members checks the whole event in one
// pass and hands out its members, and the desc object, checked with it,
// is split with jsonx.CheckedMembers without a second check (a
// PostToolCall carries its output twice, result and text). It reports
// false, leaving w as it was, when data is not valid JSON.
//
// The rules, plainly:
//   - Keys match exactly. maria writes its keys in lower case, as
//     docs/protocol.md §6 names them; a key in another case is not one of
//     maria's and is ignored like any unknown key.
//   - Of duplicate keys the last wins; a later desc replaces an earlier
//     one whole.
//   - desc: an object is the HEAD envelope; null is no desc; any other
//     value is a HEAD envelope with nothing in its desc (so no variant).
//   - id and created are the envelope's. The other keys beside them are
//     the docs shape's fields (msg, message, usage…), whose id is the
//     envelope's.
func (w *wireEvent) read(data []byte) bool {
	return jsonx.Members(data, func(key string, v []byte) {
		switch key {
		case "id":
			w.ID = v
		case "created":
			w.Created = v
		case "desc":
			w.desc, w.hasDesc = wireDesc{}, string(v) != "null"
			if v[0] == '{' {
				jsonx.CheckedMembers(v, w.desc.set)
			}
		default:
			w.flat.set(key, v)
		}
	})
}

// set keeps v as the field named key; other keys are not maria's.
func (d *wireDesc) set(key string, v []byte) {
	switch key {
	case "msg":
		d.Msg = v
	case "id":
		d.ID = v
	case "name":
		d.Name = v
	case "model":
		d.Model = v
	case "prompt":
		d.Prompt = v
	case "tool":
		d.Tool = v
	case "message":
		d.Message = v
	case "content":
		d.Content = v
	case "tool_calls":
		d.ToolCalls = v
	case "usage":
		d.Usage = v
	case "tool_call":
		d.ToolCall = v
	case "args":
		d.Args = v
	case "result":
		d.Result = v
	case "error":
		d.Error = v
	case "text":
		d.Text = v
	case "token_count":
		d.TokenCount = v
	case "origin_token_count":
		d.OriginCount = v
	case "pruned_token_count":
		d.PrunedCount = v
	case "todos":
		d.Todos = v
	}
}

// notJSON is the notice for an event jsonx refused. jsonx gives a verdict,
// not a reason, so encoding/json is asked for the words of its error only:
// into a struct with no fields, it decodes nothing.
func notJSON(f events.Frame, data []byte) events.Event {
	why := "event is not valid JSON"
	var none struct{}
	if err := json.Unmarshal(data, &none); err != nil {
		why += " (" + events.Excerpt([]byte(err.Error()), 120) + ")"
	}
	return invalid(f, why)
}

func decodeMaria(f events.Frame) events.Event {
	data := bytes.TrimSpace(f.Data)
	if len(data) == 0 {
		return invalid(f, "empty event")
	}
	if data[0] != '{' {
		return invalid(f, "event is not a JSON object")
	}
	// w stays in this frame (two descs of about 500 bytes, which would
	// be a sizeable part of a replay's garbage on the heap).
	var w wireEvent
	if !w.read(data) {
		return notJSON(f, data)
	}
	ev := events.Event{ID: jsonx.ID(w.ID), Created: msTime(jsonNumber(w.Created))}
	var d *wireDesc
	switch {
	case w.hasDesc:
		ev.Dialect = events.DialectHead
		d = &w.desc
	case w.flat.Msg != nil:
		ev.Dialect = events.DialectDocs
		d = &w.flat
		d.ID = w.ID
	default:
		return invalid(f, "event has neither desc.msg nor msg")
	}
	if ev.ID == "" {
		ev.Fingerprint = fingerprint(f)
	}
	msg, _ := jsonx.Unquote(d.Msg)
	if msg == "" {
		return invalid(f, "event variant (msg) is not a string")
	}
	ev.Variant = msg
	if err := decodeVariant(&ev, msg, d); err != "" {
		out := invalid(f, fmt.Sprintf("%s event: %s", events.Excerpt([]byte(msg), 40), err))
		out.ID, out.Dialect = ev.ID, ev.Dialect
		return out
	}
	return ev
}

// decodeVariant fills ev for one variant; it returns a non-empty reason when
// a required part is malformed.
func decodeVariant(ev *events.Event, msg string, d *wireDesc) string {
	switch msg {
	case "ModelLoaded":
		ev.Kind = events.KindModelLoaded
		ev.Model = firstString(d.Name, d.Model)
	case "SystemPromptSet":
		ev.Kind = events.KindSystemPromptSet
		ev.Text = jsonx.String(d.Prompt)
	case "ToolAdded":
		ev.Kind = events.KindToolAdded
		var t struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(d.Tool, &t)
		ev.ToolName = t.Name
		if ev.ToolName == "" {
			ev.ToolName = jsonx.String(d.Name)
		}
	case "MessageQueued", "MessageUnqueued":
		ev.Kind = events.KindMessageQueued
		if msg == "MessageUnqueued" {
			ev.Kind = events.KindMessageUnqueued
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(d.Message, &m)
		ev.MessageID = jsonx.ID(m.ID)
		ev.Text = MessageText(d.Message)
		if ev.MessageID == "" {
			return "no message id"
		}
	case "PreConversation":
		ev.Kind = events.KindPreConversation
	case "PostConversation":
		ev.Kind = events.KindPostConversation
	case "Cancelled":
		ev.Kind = events.KindCancelled
	case "Failed":
		ev.Kind = events.KindFailed
		ev.Text = ErrorText(d.Error)
	case "UserMessage":
		ev.Kind = events.KindUserMessage
		ev.Text = ContentText(d.Content)
	case "AssistantMessage":
		ev.Kind = events.KindAssistantMessage
		ev.Text = ContentText(d.Content)
		ev.ToolCalls = parseToolCalls(d.ToolCalls)
		ev.Usage = parseUsage(d.Usage)
	case "RequestCompleted":
		ev.Kind = events.KindAssistantMessage
		var m struct {
			Content   jsonx.Raw `json:"content"`
			ToolCalls jsonx.Raw `json:"tool_calls"`
		}
		_ = json.Unmarshal(d.Message, &m)
		ev.Text = ContentText(m.Content)
		ev.ToolCalls = parseToolCalls(m.ToolCalls)
		ev.Usage = parseUsage(d.Usage)
	case "MessageAdded":
		return decodeMessageAdded(ev, d)
	case "TokenCounted":
		ev.Kind = events.KindTokenCounted
		ev.TokenCount = jsonx.Int(d.TokenCount)
	case "ContextPruned":
		ev.Kind = events.KindContextPruned
		ev.TokenCount = jsonx.Int(d.OriginCount)
		ev.PrunedTo = jsonx.Int(d.PrunedCount)
	case "Pruned":
		ev.Kind = events.KindPruned
		ev.PrunedID = jsonx.ID(d.ID)
	case "PreToolCall", "PostToolCall":
		ev.Kind = events.KindPreToolCall
		call := parseToolCall(d.ToolCall)
		name := jsonx.String(d.Name)
		if name == "" {
			name = call.Name
		}
		if call.Name == "" {
			call.Name = name
		}
		if call.Args == nil && call.ArgsRaw == "" && len(d.Args) > 0 && !jsonx.IsNull(d.Args) {
			// maria's convenience copy: the parsed args, or the raw string.
			call.Args, call.ArgsRaw, call.ArgsErr, call.DoubleEncoded = events.NormalizeArgs(d.Args)
		}
		ev.Tool = &events.ToolEvent{Call: call, Name: name}
		if msg == "PostToolCall" {
			ev.Kind = events.KindPostToolCall
			res, structured := parseResult(name, call, d)
			ev.Tool.Result = res
			if structured && ev.Dialect == events.DialectHead {
				ev.Dialect = events.DialectLegacy
			}
		}
	case "TodoUpdated":
		ev.Kind = events.KindTodoUpdated
		ev.Todos = parseTodoList(d.Todos)
	default:
		ev.Kind = events.KindUnknown
		ev.Notice = fmt.Sprintf("unknown event variant %q", events.Excerpt([]byte(msg), 60))
	}
	return ""
}

// decodeMessageAdded maps the docs MessageAdded by role.
func decodeMessageAdded(ev *events.Event, d *wireDesc) string {
	var m struct {
		Role       string    `json:"role"`
		Content    jsonx.Raw `json:"content"`
		ToolCalls  jsonx.Raw `json:"tool_calls"`
		ToolCallID jsonx.Raw `json:"tool_call_id"`
		Name       string    `json:"name"`
	}
	if err := json.Unmarshal(d.Message, &m); err != nil {
		return "message is not an object"
	}
	text := ContentText(m.Content)
	switch m.Role {
	case "user":
		ev.Kind, ev.Text = events.KindUserMessage, text
	case "assistant":
		ev.Kind, ev.Text = events.KindAssistantMessage, text
		ev.ToolCalls = parseToolCalls(m.ToolCalls)
	case "system":
		ev.Kind, ev.Text = events.KindSystemMessage, text
	case "tool":
		ev.Kind = events.KindToolMessage
		ev.Tool = &events.ToolEvent{Call: events.ToolCall{ID: jsonx.ID(m.ToolCallID), Name: m.Name}, Name: m.Name,
			Result: &events.ToolResult{Text: text}}
		events.FillDetails(ev.Tool.Result, m.Name, ev.Tool.Call)
	default:
		ev.Kind = events.KindUnknown
		ev.Notice = fmt.Sprintf("MessageAdded with unknown role %q", events.Excerpt([]byte(m.Role), 40))
	}
	return ""
}

func parseToolCalls(raw []byte) []events.ToolCall {
	// jsonx.List splits as json.Unmarshal into a []json.RawMessage does,
	// except for null, which leaves that list nil.
	list, ok := jsonx.List(raw)
	if !ok && !jsonx.IsNull(raw) {
		return nil
	}
	out := make([]events.ToolCall, 0, len(list))
	for _, r := range list {
		c := parseToolCall(r)
		if c.ID == "" && c.Name == "" && c.ArgsRaw == "" {
			continue
		}
		out = append(out, c)
	}
	return out
}

// parseToolCall accepts the OpenAI shape {"id","function":{"name","arguments"}},
// a flat {"id","name","arguments"} and Anthropic's {"id","name","input"}.
//
// It reads raw as json.Unmarshal into a struct of those fields would
// (FuzzParseToolCall holds it to that), in one pass of jsonx and without
// reflection: keys match case-insensitively, the last of duplicate keys
// wins, null leaves a string as it was, a second function object merges
// into the first, and a value of the wrong type spoils the whole call.
func parseToolCall(raw []byte) events.ToolCall {
	var (
		id, args, input []byte
		name            string
		fn              *toolFunction
		bad             bool
	)
	ok := jsonx.Members(raw, func(key string, v []byte) {
		switch {
		case strings.EqualFold(key, "id"):
			id = v
		case strings.EqualFold(key, "name"):
			bad = !setString(&name, v) || bad
		case strings.EqualFold(key, "arguments"):
			args = v
		case strings.EqualFold(key, "input"):
			input = v
		case strings.EqualFold(key, "function"):
			switch {
			case jsonx.IsNull(v):
				fn = nil
			case v[0] != '{':
				bad = true
			default:
				if fn == nil {
					fn = &toolFunction{}
				}
				jsonx.Members(v, func(key string, v []byte) {
					switch {
					case strings.EqualFold(key, "name"):
						bad = !setString(&fn.name, v) || bad
					case strings.EqualFold(key, "arguments"):
						fn.args = v
					}
				})
			}
		}
	})
	if !ok || bad {
		return events.ToolCall{} // not an object (null gives the same), or a type error
	}
	c := events.ToolCall{ID: jsonx.ID(id), Name: name}
	if fn != nil {
		if fn.name != "" {
			c.Name = fn.name
		}
		if fn.args != nil {
			args = fn.args
		}
	}
	if args == nil {
		args = input
	}
	c.Args, c.ArgsRaw, c.ArgsErr, c.DoubleEncoded = events.NormalizeArgs(args)
	return c
}

// toolFunction is the function object of an OpenAI tool call.
type toolFunction struct {
	name string
	args []byte
}

// setString sets *s from a JSON value as json.Unmarshal into a string
// field does: null changes nothing, another type is an error (false).
func setString(s *string, v []byte) bool {
	if jsonx.IsNull(v) {
		return true
	}
	u, ok := jsonx.Unquote(v)
	if ok {
		*s = u
	}
	return ok
}

// parseUsage accepts an OpenAI usage object, maria's internal or Anthropic
// names, an array of records (summed; the docs dialect) and null.
func parseUsage(raw []byte) *events.Usage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || jsonx.IsNull(raw) {
		return nil
	}
	if raw[0] == '[' {
		list, ok := jsonx.List(raw) // as json.Unmarshal into []json.RawMessage
		if !ok || len(list) == 0 {
			return nil
		}
		var sum events.Usage
		any := false
		for _, r := range list {
			if u := parseUsage(r); u != nil {
				any = true
				sum.InputTokens += u.InputTokens
				sum.OutputTokens += u.OutputTokens
				sum.CachedTokens += u.CachedTokens
				sum.TotalTokens += u.TotalTokens
			}
		}
		if !any {
			return nil
		}
		return &sum
	}
	// jsonx.Object splits as json.Unmarshal into a map does, without
	// reflection (a usage record comes with every reply).
	w, ok := jsonx.Object(raw)
	if !ok {
		return nil
	}
	u := &events.Usage{
		InputTokens:  firstInt(w, "prompt_tokens", "input_tokens", "inputTokens"),
		OutputTokens: firstInt(w, "completion_tokens", "output_tokens", "outputTokens"),
		TotalTokens:  firstInt(w, "total_tokens", "totalTokens"),
		CachedTokens: firstInt(w, "cache_read_tokens", "cache_read_input_tokens", "cachedTokens", "cacheReadTokens"),
	}
	if det, ok := w["prompt_tokens_details"]; ok {
		// null (which json.Unmarshal took as an empty map) counts nothing
		// either way.
		if d, ok := jsonx.Object(det); ok {
			if c := firstInt(d, "cached_tokens"); c > u.CachedTokens {
				u.CachedTokens = c
			}
		}
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return u
}

func firstInt(m map[string]json.RawMessage, keys ...string) int64 {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if n := jsonx.Int(v); n != 0 {
				return n
			}
		}
	}
	return 0
}

func jsonNumber(raw []byte) json.Number {
	if n := jsonx.Int(raw); n > 0 {
		return json.Number(strconv.FormatInt(n, 10))
	}
	return ""
}

// checkedStr is jsonx.String for a field of a wireDesc, which is always a
// checked JSON value (wireEvent.read reads only an event that jsonx.Members
// checked whole): the large texts (a tool's output) are read without
// checking them again.
func checkedStr(raw []byte) string {
	s, _ := jsonx.UnquoteChecked(raw)
	return s
}

func firstString(raws ...[]byte) string {
	for _, r := range raws {
		if s := jsonx.String(r); s != "" {
			return s
		}
	}
	return ""
}

// ErrorText renders maria's opaque error JSON readably: ["ToolFailure","msg"]
// becomes msg; ["HttpError",{"code":401,"body":"{…message…}"}] becomes
// "HttpError 401: message"; anything else a bounded compact excerpt.
func ErrorText(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || jsonx.IsNull(raw) {
		return ""
	}
	switch raw[0] {
	case '"':
		return jsonx.String(raw)
	case '[':
		var parts []json.RawMessage
		if json.Unmarshal(raw, &parts) == nil && len(parts) > 0 && len(bytes.TrimSpace(parts[0])) > 0 && bytes.TrimSpace(parts[0])[0] == '"' {
			ctor := jsonx.String(parts[0])
			if len(parts) == 1 {
				return ctor
			}
			detail := ErrorText(parts[1])
			if ctor == "ToolFailure" || ctor == "" {
				return detail
			}
			if strings.HasPrefix(detail, ctor) {
				return detail
			}
			return ctor + " " + detail
		}
	case '{':
		var w struct {
			Code    json.RawMessage `json:"code"`
			Body    json.RawMessage `json:"body"`
			Message json.RawMessage `json:"message"`
			Error   json.RawMessage `json:"error"`
		}
		if json.Unmarshal(raw, &w) == nil {
			detail := ""
			switch {
			case w.Message != nil:
				detail = ErrorText(w.Message)
			case w.Error != nil:
				detail = ErrorText(w.Error)
			case w.Body != nil:
				detail = jsonx.String(w.Body)
				if detail == "" {
					detail = string(w.Body)
				}
				if b := bytes.TrimSpace([]byte(detail)); len(b) > 0 && b[0] == '{' {
					if inner := ErrorText(b); inner != "" {
						detail = inner
					}
				}
			}
			if c := jsonx.Int(w.Code); c != 0 {
				code := strconv.FormatInt(c, 10) + ":"
				if !strings.HasPrefix(detail, code) {
					detail = strings.TrimSpace(code + " " + detail)
				}
			}
			if detail != "" {
				return events.Excerpt([]byte(detail), 1000)
			}
		}
	}
	return events.Excerpt(jsonx.Compact(raw), 500)
}

// parseResult builds a ToolResult from a PostToolCall. It reports whether
// the result was structured (a legacy build) rather than a string. The text
// is kept whole; at HEAD result repeats it, and only one copy is read.
func parseResult(name string, call events.ToolCall, d *wireDesc) (*events.ToolResult, bool) {
	text := checkedStr(d.Text)
	r := &events.ToolResult{}
	structured := false
	errRaw := bytes.TrimSpace(d.Error)
	resRaw := bytes.TrimSpace(d.Result)
	switch {
	case len(errRaw) > 0 && !jsonx.IsNull(errRaw):
		r.IsError = true
		r.ErrorText = ErrorText(errRaw)
		if text == "" {
			text = r.ErrorText
		}
	case len(resRaw) > 0 && !jsonx.IsNull(resRaw):
		if resRaw[0] == '"' {
			if text == "" {
				text = checkedStr(resRaw)
			}
		} else {
			structured = true
			if len(resRaw) <= MaxStructured {
				r.Structured = jsonx.Compact(resRaw)
			}
			r.Text = text
			fillStructured(r, name, resRaw)
		}
	case text == "":
		r.IsError = true
		r.ErrorText = "the tool returned neither a result nor an error"
	}
	if r.Text == "" {
		r.Text = text
	}
	if !r.IsError {
		events.FillDetails(r, name, call)
	}
	return r, structured
}
