package attocode

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

func TestReprBlocks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, text string
		ok       bool
	}{
		{`[TextContentBlock(text='hi', type='text', cache_control=None)]`, "hi", true},
		{`[TextContentBlock(text="it's", type='text', cache_control=CacheControl(type='ephemeral'))]`, "it's", true},
		{`[TextContentBlock(text='a\nb\tc \\ \'q\' \x1b[2J \u00e9 \U0001f642', type='text', cache_control=None)]`,
			"a\nb\tc \\ 'q' \x1b[2J é 🙂", true},
		{`[TextContentBlock(text='lone \ud800', type='text', cache_control=None)]`, "lone \uFFFD", true},
		{`[TextContentBlock(text='one ', type='text', cache_control=None), TextContentBlock(text='two', type='text', cache_control=None)]`, "one two", true},
		{`TextContentBlock(text='single', type='text', cache_control=None)`, "single", true},
		{`[ImageContentBlock(source=ImageSource(type='base64', media_type='image/jpeg', data='/9j/4AAQ'), type='image', cache_control=None)]`, "[image/jpeg 6 B]", true},
		{`[TextContentBlock(text='x')]`, "x", true},
		{`[FutureBlock(payload={'a': [1, 2.5, -3, True, None]})]`, "[future]", true},
		// Not the printed form: left alone.
		{`[TextContentBlock(text='unterminated, type='text')]`, "", false},
		{`[TextContentBlock(text='x', type='text')] and more`, "", false},
		{`[Foo(text='x')]`, "", false},
		{`see [TextContentBlock(text='x')]`, "", false},
		{`[]`, "", false},
		{`[TextContentBlock(text=__import__('os').system('rm -rf /'))]`, "", false},
		{strings.Repeat("[", 100) + "TextContentBlock(text='x')" + strings.Repeat("]", 100), "", false},
	}
	for _, c := range cases {
		parts, ok := reprBlocks(c.in)
		if ok != c.ok {
			t.Errorf("%q: ok=%v, want %v", c.in, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		if got := normalize.ParseContent(parts).Text; got != c.text {
			t.Errorf("%q: text %q, want %q", c.in, got, c.text)
		}
	}
}

func TestReadContent(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`"plain"`: "plain",
		`"[TextContentBlock(text='x', type='text', cache_control=None)]"`:     "x",
		`"not [TextContentBlock(text='x', type='text', cache_control=None)]"`: "not [TextContentBlock(text='x', type='text', cache_control=None)]",
		`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`:             "ab",
		`null`: "",
	} {
		if got := readContent(json.RawMessage(in)).Text; got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

func TestUsageRow(t *testing.T) {
	t.Parallel()
	cases := []struct {
		r                   row
		in, cached, written int64
	}{
		// Anthropic: input excludes the cache.
		{row{"provider": "anthropic", "input_tokens": int64(10), "cache_read_tokens": int64(900), "cache_write_tokens": int64(90)}, 1000, 900, 90},
		// OpenAI-style: input includes it.
		{row{"provider": "openrouter", "input_tokens": int64(1000), "cache_read_tokens": int64(900)}, 1000, 900, 0},
		// Unknown provider: an input below the cache reads cannot include them.
		{row{"input_tokens": int64(5), "cache_read_tokens": int64(100)}, 105, 100, 0},
		{row{"input_tokens": int64(500), "cache_read_tokens": int64(100)}, 500, 100, 0},
	}
	for _, c := range cases {
		u := usageRow(c.r)
		if u.InputTokens != c.in || u.CachedTokens != c.cached || u.CacheWriteTokens != c.written {
			t.Errorf("%v: %+v", c.r, u)
		}
	}
}

func TestTraceUsage(t *testing.T) {
	t.Parallel()
	u := traceUsage(normalize.AsObject(json.RawMessage(`{"tokens":{"input":3000,"output":10},"cache":{"cacheReadTokens":2500,"cacheWriteTokens":100}}`)))
	if u.InputTokens != 3000 || u.CachedTokens != 2500 || !u.HasCacheWrite || u.TotalTokens != 3010 {
		t.Errorf("inclusive: %+v", u)
	}
	u = traceUsage(normalize.AsObject(json.RawMessage(`{"tokens":{"input":20,"output":10},"cache":{"cacheReadTokens":2500}}`)))
	if u.InputTokens != 2520 || u.HasCacheWrite {
		t.Errorf("exclusive: %+v", u)
	}
	if traceUsage(normalize.AsObject(json.RawMessage(`{"stopReason":"end_turn"}`))) != nil {
		t.Error("no counts: want nil")
	}
}

// decodeAll feeds lines to a decoder and returns what it emitted.
func decodeAll(lines ...string) []events.Event {
	d := NewDecoder()
	var out []events.Event
	for _, l := range lines {
		out = append(out, d.Decode([]byte(l))...)
	}
	return append(out, d.Flush()...)
}

func texts(evs []events.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(ev.Kind.String() + ":" + ev.ID + ":" + ev.Text + ev.Thinking + "\n")
	}
	return b.String()
}

func TestHostMessages(t *testing.T) {
	t.Parallel()
	got := texts(decodeAll(
		`{"role":"system","content":"prompt"}`,
		`{"role":"user","content":"[System: Doom loop detected!]"}`,
		`{"role":"user","content":"[Status Recitation]\nstep 2 of 5"}`,
		`{"role":"user","content":"please [System: x] stays mine"}`,
		`{"role":"system","content":"a later system note"}`,
	))
	want := "SystemMessage:msg-1:prompt\n" +
		"Notice:msg-2:[System: Doom loop detected!]\n" +
		"Notice:msg-3:[Status Recitation]\nstep 2 of 5\n" +
		"UserMessage:msg-4:please [System: x] stays mine\n" +
		"Notice:msg-5:a later system note\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestCheckpoints: a checkpoint shows only what is new; one that went back
// (a restore) or dropped messages (a compaction) says so.
func TestCheckpoints(t *testing.T) {
	t.Parallel()
	m := func(role, text string) string { return `{"role":"` + role + `","content":"` + text + `"}` }
	entry := func(typ, data string) string {
		return `{"timestamp":"t","type":"` + typ + `","data":` + data + `}`
	}
	cp := func(label string, ms ...string) string {
		return entry("checkpoint", `{"id":"`+label+`","messages":[`+strings.Join(ms, ",")+`]}`)
	}
	got := texts(decodeAll(
		cp("c1", m("user", "one"), m("assistant", "two")),
		entry("message", m("user", "three")),
		cp("c2", m("user", "one"), m("assistant", "two"), m("user", "three"), m("assistant", "four")),
		cp("c3", m("user", "one"), m("assistant", "two")),
		entry("message", m("user", "five")),
	))
	want := "UserMessage:msg-1:one\n" +
		"AssistantMessage:msg-2:two\n" +
		"UserMessage:msg-3:three\n" +
		"AssistantMessage:msg-4:four\n" +
		"Notice::Checkpoint c3 keeps 2 of the 4 messages shown before it (the context was compacted or an earlier checkpoint restored).\n" +
		"UserMessage:msg-5:five\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestTraceTurns: a request opens a turn, its response completes it; a
// turn without a response is flushed incomplete; a task's output goes to
// its last reply only when that reply called no tools.
func TestTraceTurns(t *testing.T) {
	t.Parallel()
	evs := decodeAll(
		`{"_type":"task.start","_ts":"t","taskId":"t1","prompt":"go"}`,
		`{"_type":"llm.request","_ts":"t","requestId":"r1"}`,
		`{"_type":"llm.response","_ts":"t","requestId":"r1","stopReason":"tool_use","toolCallCount":1}`,
		`{"_type":"task.end","_ts":"t","status":"completed","result":{"success":true,"output":"done"}}`,
		`{"_type":"llm.request","_ts":"t","requestId":"r2"}`,
	)
	got := texts(evs)
	want := "UserMessage:t1:go\n" +
		"TextDelta:r1:\n" +
		"AssistantMessage:r1:\n" +
		"AssistantMessage:t1:result:done\n" +
		"TextDelta:r2:\n" +
		"AssistantMessage:r2:\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if last := evs[len(evs)-1]; !last.Incomplete {
		t.Error("the unanswered turn is not incomplete")
	}
	tl := events.NewTimeline()
	for _, ev := range evs {
		tl.Apply(ev)
	}
	n := 0
	for _, it := range tl.Items() {
		if it.Kind == events.ItemAssistant {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d assistant items, want 3 (r1, the task's output, r2)", n)
	}
}

func TestToolResults(t *testing.T) {
	t.Parallel()
	evs := decodeAll(
		`{"role":"assistant","content":"","toolCalls":[{"id":"c1","name":"bash","arguments":{"command":"false"}}]}`,
		`{"timestamp":"t","type":"tool_result","data":{"callId":"c1","result":{"success":false,"output":"boom","metadata":{"exitCode":3}}}}`,
		`{"role":"tool","content":"boom","toolCallId":"c1"}`,
		`{"role":"tool","content":"{\"success\":true,\"output\":\"fine\"}","toolCallId":"c2"}`,
		`{"role":"tool","content":"{\"success\": \"maybe\"}","toolCallId":"c3"}`,
	)
	var res []*events.ToolResult
	for _, ev := range evs {
		if ev.Kind == events.KindPostToolCall {
			res = append(res, ev.Tool.Result)
		}
	}
	if len(res) != 4 {
		t.Fatalf("%d results", len(res))
	}
	for i, r := range res[:2] {
		if !r.IsError || r.ExitCode == nil || *r.ExitCode != 3 || r.Text != "boom" {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	if res[2].IsError || res[2].Text != "fine" {
		t.Errorf("success outcome: %+v", res[2])
	}
	if res[3].Text != `{"success": "maybe"}` {
		t.Errorf("not an outcome: %+v", res[3])
	}
}

// TestDetect: Attocode's files score; other systems' records do not.
func TestDetect(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, text string
		want       bool
	}{
		{"session log", `{"timestamp":"t","type":"message","data":{"role":"user","content":"x"}}` + "\n" + `{"timestamp":"t","type":"metadata","data":{}}`, true},
		{"trace", `{"_type":"session.start","_ts":"t","traceId":"x"}` + "\n" + `{"_type":"llm.request","_ts":"t"}`, true},
		{"one trace record", `{"_type":"session.start","_ts":"t","traceId":"x"}`, true},
		{"maria", `{"id":"1","msg":"UserMessage","content":"hi"}` + "\n" + `{"id":"2","msg":"PostConversation"}`, false},
		{"claude cli", `{"type":"user","message":{"role":"user","content":"hi"},"session_id":"s"}` + "\n" + `{"type":"result","subtype":"success"}`, false},
		{"suna", `{"type":"assistant","content":"{}","metadata":"{}","thread_id":"t"}` + "\n" + `{"type":"status","content":"{}"}`, false},
		{"pynchy", `{"chat_jid":"c","type":"message","content":"x"}` + "\n" + `{"chat_jid":"c","type":"trace"}`, false},
		{"bare messages", `{"role":"user","content":"hi"}` + "\n" + `{"role":"assistant","content":"yo"}`, false},
		{"type+data of another kind", `{"timestamp":"t","type":"delta","data":{}}` + "\n" + `{"timestamp":"t","type":"delta","data":{}}`, false},
	} {
		s := ingest.SniffBytes(c.name, []byte(c.text), true)
		if got := detect(s) > 0; got != c.want {
			t.Errorf("%s: detected %v, want %v", c.name, got, c.want)
		}
	}
}

// TestFarApart: what the decoder keeps about the whole session still
// holds thousands of messages later: a checkpoint finds the messages it
// keeps however long ago they were shown (a repeated message once per
// repetition), a late result is named after its call, and the trace ends
// a turn left open at its start and never reopens an answered one.
func TestFarApart(t *testing.T) {
	t.Parallel()
	lines := []string{`{"role":"user","content":"start"}`}
	for i := range 3000 {
		n := strconv.Itoa(i)
		lines = append(lines,
			`{"role":"assistant","content":"","toolCalls":[{"id":"c-`+n+`","name":"tool-`+n+`","arguments":{}}]}`,
			`{"role":"tool","content":"ok","toolCallId":"c-`+n+`"}`,
			`{"role":"user","content":"again"}`)
	}
	lines = append(lines, `{"role":"tool","content":"late","toolCallId":"c-0"}`,
		`{"timestamp":"t","type":"checkpoint","data":{"id":"cp","messages":[`+
			`{"role":"user","content":"start"},{"role":"user","content":"again"},`+
			`{"role":"user","content":"again"},{"role":"user","content":"new"}]}}`)
	evs := decodeAll(lines...)
	late := evs[len(evs)-3]
	if late.Kind != events.KindPostToolCall || late.Tool.Name != "tool-0" || late.Tool.Result.Text != "late" {
		t.Errorf("a result 3000 calls after its call: %+v, want named tool-0", late.Tool)
	}
	if got, want := texts(evs[len(evs)-2:]), "Notice::Checkpoint cp keeps 3 of the 9002 messages shown before it "+
		"(the context was compacted or an earlier checkpoint restored).\nUserMessage:msg-9003:new\n"; got != want {
		t.Errorf("the checkpoint: got\n%s\nwant\n%s", got, want)
	}

	lines = []string{`{"_type":"llm.request","_ts":"t","requestId":"first"}`}
	for i := range 3000 {
		n := strconv.Itoa(i)
		lines = append(lines, `{"_type":"llm.request","_ts":"t","requestId":"r-`+n+`"}`,
			`{"_type":"llm.response","_ts":"t","requestId":"r-`+n+`"}`)
	}
	lines = append(lines, `{"_type":"llm.request","_ts":"t","requestId":"r-0"}`,
		`{"_type":"llm.request","_ts":"t","requestId":"last"}`)
	evs = decodeAll(lines...)
	if got, want := texts(evs[len(evs)-3:]), "TextDelta:last:\nAssistantMessage:first:\nAssistantMessage:last:\n"; got != want {
		t.Errorf("the trace's end: got\n%s\nwant\n%s", got, want)
	}
}
