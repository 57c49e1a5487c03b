package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/jsonx"
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
func Decode(f Frame) Event { return DecodeIn(f, nil) }

// TextMemory gives memory for the large texts an event keeps (a tool's
// output); Bytes returns nil to leave a text to the heap. See
// internal/textmem.
type TextMemory interface {
	Bytes(n int) []byte
}

// DecodeIn is Decode that places the large texts of the event it returns
// in mem (nil: the heap).
func DecodeIn(f Frame, mem TextMemory) (ev Event) {
	defer func() {
		if r := recover(); r != nil {
			ev = invalid(f, fmt.Sprintf("decoder error: %v", r))
			if DaemonStreamName(f.Name) {
				ev.Dialect = DialectDaemon
			}
		}
	}()
	switch f.Name {
	case "maria":
		return decodeMaria(f, mem)
	case "maria.queued_messages.synchronized":
		return decodeSnapshot(f)
	case "daemon.tasks.synchronized":
		tasks, err := ParseTasks(f.Data)
		if err != nil {
			return daemonInvalid(f, err.Error())
		}
		return Event{Kind: KindTasksSynced, Dialect: DialectDaemon, Variant: f.Name, Fingerprint: fingerprint(f), Tasks: tasks}
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
		return Event{Kind: KindTaskChanged, Dialect: DialectDaemon, Variant: f.Name, Fingerprint: fingerprint(f), Task: &task}
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
func foreign(f Frame) Event {
	what := "a frame without an event name"
	if f.Name != "" {
		what = fmt.Sprintf("event %s", ForeignName(f.Name))
	}
	return Event{Kind: KindForeign, Variant: f.Name, Fingerprint: fingerprint(f),
		Notice: fmt.Sprintf("%s (%d bytes of data)", what, len(f.Data))}
}

// ForeignName quotes an event name maria does not send, bounded and with
// every control or invisible character escaped, for a notice.
func ForeignName(name string) string {
	return strconv.QuoteToGraphic(Excerpt([]byte(name), 40))
}

// daemonInvalid is invalid for the daemon stream's events.
func daemonInvalid(f Frame, why string) Event {
	ev := invalid(f, why)
	ev.Dialect = DialectDaemon
	return ev
}

func invalid(f Frame, why string) Event {
	return Event{Kind: KindInvalid, Variant: f.Name, Fingerprint: fingerprint(f),
		Notice: fmt.Sprintf("%s: %s", why, Excerpt(bytes.TrimSpace(f.Data), excerptLen))}
}

// fingerprint identifies an event that has no id, so a replay can be
// recognised (see Timeline.Reconnected).
func fingerprint(f Frame) uint64 {
	h := fnv.New64a()
	h.Write([]byte(f.Name))
	h.Write([]byte{0})
	h.Write(f.Data)
	return h.Sum64()
}

func decodeSnapshot(f Frame) Event {
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
	if isNull(data) {
		data = []byte("[]")
	}
	q, err := ParseQueuedMessages(data)
	if err != nil {
		return invalid(f, "queued-messages snapshot is not a list")
	}
	return Event{Kind: KindQueueSnapshot, Dialect: DialectHead, Variant: f.Name, Queue: q}
}

func decodeAuth(f Frame) Event {
	var w struct {
		Provider      string `json:"provider"`
		Authenticated bool   `json:"authenticated"`
		Message       string `json:"message"`
	}
	if err := json.Unmarshal(f.Data, &w); err != nil {
		return daemonInvalid(f, "auth event does not decode")
	}
	return Event{Kind: KindAuth, Dialect: DialectDaemon, Variant: f.Name, Fingerprint: fingerprint(f), Auth: &Auth{
		Event: strings.TrimPrefix(f.Name, "auth."), Provider: w.Provider,
		Authenticated: w.Authenticated, Message: w.Message,
	}}
}

// rawJSON is a JSON value left where it is. json.Unmarshal hands an
// Unmarshaler a slice of its own input, so a field of this type costs no
// copy, where json.RawMessage copies: a PostToolCall at HEAD carries its
// output twice (result and text), and both would be copied before either is
// read. A rawJSON is only valid while the frame's data is: what an Event
// keeps is always copied out of it (jsonx.Unquote, compact, json.Unmarshal).
type rawJSON []byte

func (r *rawJSON) UnmarshalJSON(b []byte) error { *r = b; return nil }

// wireEvent covers both the HEAD envelope {"id","created","desc":{…}} and
// the flat docs shape {"id","msg",…} in one Unmarshal, so the event's bytes
// are scanned once. Every field stays raw (and is read once, see
// jsonx.Unquote) so that a wrong type in one field only spoils that field;
// the outer id shadows the embedded one.
type wireEvent struct {
	ID      rawJSON   `json:"id"`
	Created rawJSON   `json:"created"`
	Desc    *wireDesc `json:"desc"`
	wireDesc
	// What split reads desc into (encoding/json fills Desc instead): see
	// theDesc.
	desc    wireDesc
	hasDesc bool
}

type wireDesc struct {
	Msg         rawJSON `json:"msg"`
	ID          rawJSON `json:"id"`
	Name        rawJSON `json:"name"`
	Model       rawJSON `json:"model"`
	Prompt      rawJSON `json:"prompt"`
	Tool        rawJSON `json:"tool"`
	Message     rawJSON `json:"message"`
	Content     rawJSON `json:"content"`
	ToolCalls   rawJSON `json:"tool_calls"`
	Usage       rawJSON `json:"usage"`
	ToolCall    rawJSON `json:"tool_call"`
	Args        rawJSON `json:"args"`
	Result      rawJSON `json:"result"`
	Error       rawJSON `json:"error"`
	Text        rawJSON `json:"text"`
	TokenCount  rawJSON `json:"token_count"`
	OriginCount rawJSON `json:"origin_token_count"`
	PrunedCount rawJSON `json:"pruned_token_count"`
	Todos       rawJSON `json:"todos"`

	// mem is where a large text of this event goes (nil: the heap).
	mem TextMemory
}

func decodeMaria(f Frame, mem TextMemory) Event {
	data := bytes.TrimSpace(f.Data)
	if len(data) == 0 {
		return invalid(f, "empty event")
	}
	if data[0] != '{' {
		return invalid(f, "event is not a JSON object")
	}
	// w stays in this frame, its desc too (see setDesc): they were two
	// allocations of about 500 bytes an event, a sizeable part of a
	// replay's garbage.
	var w wireEvent
	if !w.split(data) {
		// encoding/json reads what split refuses, into its own copy so
		// that w does not escape.
		wj := new(wireEvent)
		err := json.Unmarshal(data, wj)
		// A desc that is not an object is only a wrong type: the rest of
		// the event was still decoded (and may be the docs shape).
		var te *json.UnmarshalTypeError
		if err != nil && !errors.As(err, &te) {
			return invalid(f, "event is not valid JSON ("+shortErr(err)+")")
		}
		w = *wj
	}
	ev := Event{ID: idString(w.ID), Created: msTime(jsonNumber(w.Created))}
	d := w.theDesc()
	switch {
	case d != nil:
		ev.Dialect = DialectHead
	case w.Msg != nil:
		ev.Dialect = DialectDocs
		d = &w.wireDesc
		d.ID = w.ID
	default:
		return invalid(f, "event has neither desc.msg nor msg")
	}
	d.mem = mem
	if ev.ID == "" {
		ev.Fingerprint = fingerprint(f)
	}
	msg, _ := jsonx.Unquote(d.Msg)
	if msg == "" {
		return invalid(f, "event variant (msg) is not a string")
	}
	ev.Variant = msg
	if err := decodeVariant(&ev, msg, d); err != "" {
		out := invalid(f, fmt.Sprintf("%s event: %s", Excerpt([]byte(msg), 40), err))
		out.ID, out.Dialect = ev.ID, ev.Dialect
		return out
	}
	return ev
}

// decodeVariant fills ev for one variant; it returns a non-empty reason when
// a required part is malformed.
func decodeVariant(ev *Event, msg string, d *wireDesc) string {
	switch msg {
	case "ModelLoaded":
		ev.Kind = KindModelLoaded
		ev.Model = firstString(d.Name, d.Model)
	case "SystemPromptSet":
		ev.Kind = KindSystemPromptSet
		ev.Text = str(d.Prompt)
	case "ToolAdded":
		ev.Kind = KindToolAdded
		var t struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(d.Tool, &t)
		ev.ToolName = t.Name
		if ev.ToolName == "" {
			ev.ToolName = str(d.Name)
		}
	case "MessageQueued", "MessageUnqueued":
		ev.Kind = KindMessageQueued
		if msg == "MessageUnqueued" {
			ev.Kind = KindMessageUnqueued
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(d.Message, &m)
		ev.MessageID = idString(m.ID)
		ev.Text = MessageText(d.Message)
		if ev.MessageID == "" {
			return "no message id"
		}
	case "PreConversation":
		ev.Kind = KindPreConversation
	case "PostConversation":
		ev.Kind = KindPostConversation
	case "Cancelled":
		ev.Kind = KindCancelled
	case "Failed":
		ev.Kind = KindFailed
		ev.Text = ErrorText(d.Error)
	case "UserMessage":
		ev.Kind = KindUserMessage
		ev.Text = ContentText(d.Content)
	case "AssistantMessage":
		ev.Kind = KindAssistantMessage
		ev.Text = ContentText(d.Content)
		ev.ToolCalls = parseToolCalls(d.ToolCalls)
		ev.Usage = parseUsage(d.Usage)
	case "RequestCompleted":
		ev.Kind = KindAssistantMessage
		var m struct {
			Content   rawJSON `json:"content"`
			ToolCalls rawJSON `json:"tool_calls"`
		}
		_ = json.Unmarshal(d.Message, &m)
		ev.Text = ContentText(m.Content)
		ev.ToolCalls = parseToolCalls(m.ToolCalls)
		ev.Usage = parseUsage(d.Usage)
	case "MessageAdded":
		return decodeMessageAdded(ev, d)
	case "TokenCounted":
		ev.Kind = KindTokenCounted
		ev.TokenCount = jsonInt(d.TokenCount)
	case "ContextPruned":
		ev.Kind = KindContextPruned
		ev.TokenCount = jsonInt(d.OriginCount)
		ev.PrunedTo = jsonInt(d.PrunedCount)
	case "Pruned":
		ev.Kind = KindPruned
		ev.PrunedID = idString(d.ID)
	case "PreToolCall", "PostToolCall":
		ev.Kind = KindPreToolCall
		call := parseToolCall(d.ToolCall)
		name := str(d.Name)
		if name == "" {
			name = call.Name
		}
		if call.Name == "" {
			call.Name = name
		}
		if call.Args == nil && call.ArgsRaw == "" && len(d.Args) > 0 && !isNull(d.Args) {
			// maria's convenience copy: the parsed args, or the raw string.
			call.Args, call.ArgsRaw, call.ArgsErr, call.DoubleEncoded = normalizeArgs(d.Args)
		}
		ev.Tool = &ToolEvent{Call: call, Name: name}
		if msg == "PostToolCall" {
			ev.Kind = KindPostToolCall
			res, structured := parseResult(name, call, d)
			ev.Tool.Result = res
			if structured && ev.Dialect == DialectHead {
				ev.Dialect = DialectLegacy
			}
		}
	case "TodoUpdated":
		ev.Kind = KindTodoUpdated
		ev.Todos = parseTodoList(d.Todos)
	default:
		ev.Kind = KindUnknown
		ev.Notice = fmt.Sprintf("unknown event variant %q", Excerpt([]byte(msg), 60))
	}
	return ""
}

// decodeMessageAdded maps the docs MessageAdded by role.
func decodeMessageAdded(ev *Event, d *wireDesc) string {
	var m struct {
		Role       string  `json:"role"`
		Content    rawJSON `json:"content"`
		ToolCalls  rawJSON `json:"tool_calls"`
		ToolCallID rawJSON `json:"tool_call_id"`
		Name       string  `json:"name"`
	}
	if err := json.Unmarshal(d.Message, &m); err != nil {
		return "message is not an object"
	}
	text := ContentText(m.Content)
	switch m.Role {
	case "user":
		ev.Kind, ev.Text = KindUserMessage, text
	case "assistant":
		ev.Kind, ev.Text = KindAssistantMessage, text
		ev.ToolCalls = parseToolCalls(m.ToolCalls)
	case "system":
		ev.Kind, ev.Text = KindSystemMessage, text
	case "tool":
		ev.Kind = KindToolMessage
		ev.Tool = &ToolEvent{Call: ToolCall{ID: idString(m.ToolCallID), Name: m.Name}, Name: m.Name,
			Result: &ToolResult{Text: text}}
		fillDetails(ev.Tool.Result, m.Name, ev.Tool.Call)
	default:
		ev.Kind = KindUnknown
		ev.Notice = fmt.Sprintf("MessageAdded with unknown role %q", Excerpt([]byte(m.Role), 40))
	}
	return ""
}

func parseToolCalls(raw []byte) []ToolCall {
	// jsonx.List splits as json.Unmarshal into a []json.RawMessage does,
	// except for null, which leaves that list nil.
	list, ok := jsonx.List(raw)
	if !ok && !isNull(raw) {
		return nil
	}
	out := make([]ToolCall, 0, len(list))
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
func parseToolCall(raw []byte) ToolCall {
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
			case isNull(v):
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
		return ToolCall{} // not an object (null gives the same), or a type error
	}
	c := ToolCall{ID: idString(id), Name: name}
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
	c.Args, c.ArgsRaw, c.ArgsErr, c.DoubleEncoded = normalizeArgs(args)
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
	if isNull(v) {
		return true
	}
	u, ok := jsonx.Unquote(v)
	if ok {
		*s = u
	}
	return ok
}

// normalizeArgs turns tool-call arguments (a JSON string, an object, a
// double-encoded string, empty, absent or invalid) into a JSON value plus the
// raw text. Invalid arguments are kept raw with the reason; never fatal.
func normalizeArgs(raw []byte) (args json.RawMessage, text, errText string, double bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return nil, "", "", false
	}
	if raw[0] != '"' {
		return compact(raw), string(raw), "", false
	}
	s, ok := jsonx.Unquote(raw)
	if !ok {
		err := json.Unmarshal(raw, new(string)) // only to say why
		if err == nil {
			err = errors.New("not a JSON string")
		}
		return nil, string(raw), shortErr(err), false
	}
	text = s
	if strings.TrimSpace(s) == "" {
		return nil, "", "", false
	}
	// Up to two extra levels of string encoding are undone.
	cur := []byte(s)
	for level := 0; level < 3; level++ {
		// A valid value is cur without the JSON white space around it,
		// what json.Unmarshal into a rawJSON hands over (a valid value
		// neither starts nor ends with other space); encoding/json is
		// asked only to say what is wrong with an invalid one.
		if !jsonx.Valid(cur) {
			if level == 0 {
				var v rawJSON
				err := json.Unmarshal(cur, &v)
				if err == nil {
					err = errors.New("not valid JSON")
				}
				return nil, text, shortErr(err), false
			}
			// A string that holds a string that isn't JSON: that's the value.
			return compact(prev(cur)), text, "", true
		}
		v := bytes.TrimSpace(cur) // a slice of cur; compact copies what is kept
		if v[0] != '"' || level == 2 {
			return compact(v), text, "", level > 0
		}
		inner, ok := jsonx.Unquote(v) // as json.Unmarshal into a string
		if !ok {
			return compact(v), text, "", level > 0
		}
		cur = []byte(inner)
	}
	return nil, text, "", false
}

// prev re-encodes a string value that turned out not to hold JSON.
func prev(s []byte) json.RawMessage {
	b, _ := json.Marshal(string(s))
	return b
}

// compact is raw without the white space outside its strings, as
// json.Compact writes it, or a copy of raw when it is not valid JSON.
func compact(raw []byte) json.RawMessage {
	if b, ok := jsonx.AppendCompact(make([]byte, 0, len(raw)), raw); ok {
		return b
	}
	return append(json.RawMessage(nil), raw...)
}

// parseUsage accepts an OpenAI usage object, maria's internal or Anthropic
// names, an array of records (summed; the docs dialect) and null.
func parseUsage(raw []byte) *Usage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	if raw[0] == '[' {
		list, ok := jsonx.List(raw) // as json.Unmarshal into []json.RawMessage
		if !ok || len(list) == 0 {
			return nil
		}
		var sum Usage
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
	u := &Usage{
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
			if n := jsonInt(v); n != 0 {
				return n
			}
		}
	}
	return 0
}

// jsonInt reads an integer leniently: a number, a float or a numeric
// string; anything else is 0.
func jsonInt(raw []byte) int64 {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	s := string(raw)
	if raw[0] == '"' {
		var ok bool
		if s, ok = jsonx.Unquote(raw); !ok {
			return 0
		}
	}
	if i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && f < 1e18 && f > -1e18 {
		return int64(f)
	}
	return 0
}

func jsonNumber(raw []byte) json.Number {
	if n := jsonInt(raw); n > 0 {
		return json.Number(strconv.FormatInt(n, 10))
	}
	return ""
}

// str reads a JSON string, or "" for anything else.
func str(raw []byte) string {
	s, _ := jsonx.Unquote(raw)
	return s
}

// checkedStr is str for a field of a wireDesc, which is always a checked
// JSON value (split reads only an event that jsonx.Members checked whole,
// its fallback only what encoding/json accepted): the large texts (a
// tool's output) are read without checking them again.
func checkedStr(raw []byte) string {
	s, _ := jsonx.UnquoteChecked(raw)
	return s
}

// text is checkedStr for a large text of d's event: it goes to d.mem.
func (d *wireDesc) text(raw []byte) string {
	if d.mem == nil {
		return checkedStr(raw)
	}
	s, _ := jsonx.UnquoteCheckedIn(raw, d.mem.Bytes)
	return s
}

func firstString(raws ...[]byte) string {
	for _, r := range raws {
		if s := str(r); s != "" {
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
	if len(raw) == 0 || isNull(raw) {
		return ""
	}
	switch raw[0] {
	case '"':
		return str(raw)
	case '[':
		var parts []json.RawMessage
		if json.Unmarshal(raw, &parts) == nil && len(parts) > 0 && len(bytes.TrimSpace(parts[0])) > 0 && bytes.TrimSpace(parts[0])[0] == '"' {
			ctor := str(parts[0])
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
				detail = str(w.Body)
				if detail == "" {
					detail = string(w.Body)
				}
				if b := bytes.TrimSpace([]byte(detail)); len(b) > 0 && b[0] == '{' {
					if inner := ErrorText(b); inner != "" {
						detail = inner
					}
				}
			}
			if c := jsonInt(w.Code); c != 0 {
				code := strconv.FormatInt(c, 10) + ":"
				if !strings.HasPrefix(detail, code) {
					detail = strings.TrimSpace(code + " " + detail)
				}
			}
			if detail != "" {
				return Excerpt([]byte(detail), 1000)
			}
		}
	}
	return Excerpt(compact(raw), 500)
}

func shortErr(err error) string { return Excerpt([]byte(err.Error()), 120) }
