package suna

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// run feeds records to a decoder and reduces its events into a timeline.
func run(t *testing.T, d *Decoder, records ...string) *events.Timeline {
	t.Helper()
	tl := events.NewTimeline()
	for _, r := range records {
		for _, ev := range d.Decode([]byte(r)) {
			tl.Apply(ev)
		}
	}
	for _, ev := range d.Flush() {
		tl.Apply(ev)
	}
	tl.EndOfInput()
	return tl
}

func items(tl *events.Timeline, kind events.ItemKind) []*events.Item {
	var out []*events.Item
	for _, it := range tl.Items() {
		if it.Kind == kind {
			out = append(out, it)
		}
	}
	return out
}

// streamRow builds a stream message row the way Suna writes one: content
// and metadata as JSON text.
func streamRow(typ, id string, content, meta any) string {
	c, _ := json.Marshal(content)
	m, _ := json.Marshal(meta)
	r := map[string]any{"thread_id": "t", "type": typ, "is_llm_message": true,
		"content": string(c), "metadata": string(m)}
	if id != "" {
		r["message_id"] = id
	} else {
		r["message_id"] = nil
	}
	b, _ := json.Marshal(r)
	return string(b)
}

func chunk(s string) string {
	return streamRow("assistant", "", map[string]any{"role": "assistant", "content": s},
		map[string]any{"stream_status": "chunk"})
}

func toolChunk(calls ...map[string]any) string {
	return streamRow("assistant", "", map[string]any{"role": "assistant", "content": ""},
		map[string]any{"stream_status": "tool_call_chunk", "tool_calls": calls})
}

func complete(id, text string, calls ...map[string]any) string {
	meta := map[string]any{"stream_status": "complete", "text_content": text}
	if len(calls) > 0 {
		meta["tool_calls"] = calls
	}
	return streamRow("assistant", id, map[string]any{"role": "assistant", "content": text}, meta)
}

func status(content map[string]any) string {
	return streamRow("status", "", content, map[string]any{})
}

func TestXMLCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		ok       bool
		text     string
		calls    []string // name + args
	}{
		{"plain text", "no calls here", false, "no calls here", nil},
		{"one call", `Searching.<function_calls><invoke name="web-search"><parameter name="query">go fuzz</parameter></invoke></function_calls>`,
			true, "Searching.", []string{`web_search {"query":"go fuzz"}`}},
		{"typed values", "<function_calls>\n<invoke name='f'>\n<parameter name='n'> 5 </parameter><parameter name='x'>1.50</parameter>" +
			"<parameter name='b'>True</parameter><parameter name='z'>007</parameter><parameter name='j'>[1, 2]</parameter>" +
			"<parameter name='bad'>{not json</parameter><parameter name='e'>1e5</parameter></invoke>\n</function_calls>",
			true, "", []string{`f {"n":5,"x":1.5,"b":true,"z":"007","j":[1,2],"bad":"{not json","e":"1e5"}`}},
		{"upper case tags, two blocks", "A<FUNCTION_CALLS><INVOKE name=\"a\"></INVOKE></FUNCTION_CALLS> B " +
			"<function_calls><invoke name=\"b\"><parameter name=\"html\"><p>&amp;</p></parameter></invoke></function_calls>",
			true, "A B", []string{`a {}`, `b {"html":"<p>&amp;</p>"}`}},
		{"unclosed block", "x <function_calls><invoke name=\"a\">", false, "x <function_calls><invoke name=\"a\">", nil},
		{"invoke without a name", "<function_calls><invoke><parameter name=\"q\">1</parameter></invoke></function_calls>", false, "", nil},
		{"unclosed parameter", "<function_calls><invoke name=\"a\"><parameter name=\"q\">1</invoke></function_calls>", false, "", nil},
		{"empty block", "<function_calls></function_calls>", false, "", nil},
		{"repeated parameter", `<function_calls><invoke name="a"><parameter name="q">1</parameter><parameter name="q">2</parameter></invoke></function_calls>`,
			true, "", []string{`a {"q":2}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls, text, ok := parseXMLCalls(tc.in)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				if text != tc.in {
					t.Fatalf("text changed on failure: %q", text)
				}
				return
			}
			if text != tc.text {
				t.Errorf("text = %q, want %q", text, tc.text)
			}
			var got []string
			for _, c := range calls {
				got = append(got, c.name+" "+string(c.args))
			}
			if strings.Join(got, "\n") != strings.Join(tc.calls, "\n") {
				t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.calls, "\n"))
			}
		})
	}
}

func TestReadContent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, typ, raw string
		obj            bool
		plain          string
	}{
		{"user message in a string", "user", `"{\"role\": \"user\", \"content\": \"hi\"}"`, true, ""},
		{"user text that claims another role", "user", `"{\"role\": \"assistant\", \"content\": \"x\"}"`, false, `{"role": "assistant", "content": "x"}`},
		{"user JSON that is no message", "user", `"{\"a\": 1}"`, false, `{"a": 1}`},
		{"compressed plain text", "user", `"hello (truncated)"`, false, "hello (truncated)"},
		{"assistant without role", "assistant", `"{\"content\": \"x\"}"`, true, ""},
		{"assistant non-message JSON", "assistant", `"{\"x\": 1}"`, false, `{"x": 1}`},
		{"status object in a string", "status", `"{\"status_type\": \"finish\"}"`, true, ""},
		{"object", "tool", `{"role":"tool","content":"ok"}`, true, ""},
		{"NaN inside the string", "status", `"{\"status_type\": \"finish\", \"x\": NaN}"`, true, ""},
		{"number", "user", `42`, false, "42"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := readContent(json.RawMessage(tc.raw), tc.typ)
			if (c.obj != nil) != tc.obj {
				t.Fatalf("obj = %v, want %v", c.obj, tc.obj)
			}
			if !tc.obj && c.plain != tc.plain {
				t.Errorf("plain = %q, want %q", c.plain, tc.plain)
			}
		})
	}
}

func TestToolCallChunks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		chunks []string
		want   string // id name args, one per call
	}{
		{"placeholder re-keyed by the real id", []string{
			toolChunk(map[string]any{"tool_call_id": "streaming_tool_0", "function_name": "f", "arguments_delta": `{"a":`, "is_delta": true}),
			toolChunk(map[string]any{"tool_call_id": "call_1", "function_name": "f", "arguments_delta": `1}`, "is_delta": true}),
		}, `call_1 f {"a":1}`},
		{"two placeholders re-keyed in order", []string{
			toolChunk(map[string]any{"tool_call_id": "streaming_tool_0", "function_name": "f", "arguments_delta": `{"a":1}`},
				map[string]any{"tool_call_id": "streaming_tool_1", "function_name": "g", "arguments_delta": `{"b":`}),
			toolChunk(map[string]any{"tool_call_id": "call_g", "function_name": "g", "arguments_delta": `2}`}),
			toolChunk(map[string]any{"tool_call_id": "call_f", "function_name": "f", "arguments_delta": ``}),
		}, "call_f f {\"a\":1}\ncall_g g {\"b\":2}"},
		{"is_delta false replaces", []string{
			toolChunk(map[string]any{"tool_call_id": "c", "function_name": "f", "arguments_delta": `{"a":1`, "is_delta": true}),
			toolChunk(map[string]any{"tool_call_id": "c", "function_name": "f", "arguments_delta": `{"a":2}`, "is_delta": false}),
		}, `c f {"a":2}`},
		{"a repeat of the whole arguments at the end", []string{
			toolChunk(map[string]any{"tool_call_id": "c", "function_name": "f", "arguments_delta": `{"q":`}),
			toolChunk(map[string]any{"tool_call_id": "c", "function_name": "f", "arguments_delta": `1}`}),
			toolChunk(map[string]any{"tool_call_id": "c", "function_name": "f", "arguments_delta": `{"q":1}`}),
		}, `c f {"q":1}`},
		{"cut arguments stay raw", []string{
			toolChunk(map[string]any{"tool_call_id": "c", "function_name": "f", "arguments_delta": `{"q":"x`}),
		}, `c f "{\"q\":\"x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tl := run(t, NewDecoder(), tc.chunks...)
			turns := items(tl, events.ItemAssistant)
			if len(turns) != 1 || !turns[0].Incomplete {
				t.Fatalf("want one incomplete turn, got %d", len(turns))
			}
			var got []string
			for _, c := range turns[0].ToolCalls {
				args := string(c.Args)
				if args == "" {
					b, _ := json.Marshal(c.ArgsRaw)
					args = string(b)
				}
				got = append(got, c.ID+" "+c.Name+" "+args)
			}
			if strings.Join(got, "\n") != tc.want {
				t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), tc.want)
			}
		})
	}
}

// TestTurnOnce: chunks and the complete row make one turn, in both modes,
// and the live mode's deltas build what the final replaces.
func TestTurnOnce(t *testing.T) {
	t.Parallel()
	frames := []string{
		`{"type": "llm_response_start"}`,
		streamRow("reasoning", "", map[string]any{"reasoning_content": "hmm"}, map[string]any{"stream_status": "reasoning_chunk"}),
		chunk("Hel"), chunk("lo"),
		complete("m1", "Hello"),
		status(map[string]any{"status_type": "finish", "finish_reason": "stop"}),
		`{"type": "llm_response_end"}`,
	}
	for _, deltas := range []bool{false, true} {
		d := NewDecoder()
		d.Deltas = deltas
		tl := run(t, d, frames...)
		turns := items(tl, events.ItemAssistant)
		if len(turns) != 1 {
			t.Fatalf("deltas=%v: %d turns", deltas, len(turns))
		}
		it := turns[0]
		if it.Text != "Hello" || it.Thinking != "hmm" || it.StopReason != events.StopEndTurn || it.Open || it.Incomplete {
			t.Errorf("deltas=%v: %+v", deltas, it)
		}
		if want := map[bool]string{false: "m1", true: "turn-1"}[deltas]; it.ID != want {
			t.Errorf("deltas=%v: id %q, want %q", deltas, it.ID, want)
		}
	}
}

// TestLiveMatchesFile: every stream fixture decoded live (deltas) gives
// the turns that the file import gives.
func TestLiveMatchesFile(t *testing.T) {
	t.Parallel()
	paths, _ := filepath.Glob("testdata/stream_*.sse")
	for _, p := range paths {
		summaries := map[bool]string{}
		for _, deltas := range []bool{false, true} {
			d := NewDecoder()
			d.Deltas = deltas
			tl := events.NewTimeline()
			_ = ingest.EachFrame(p, func(f events.Frame) error {
				for _, ev := range d.Decode(f.Data) {
					tl.Apply(ev)
				}
				return nil
			})
			for _, ev := range d.Flush() {
				tl.Apply(ev)
			}
			tl.EndOfInput()
			var b strings.Builder
			for _, it := range items(tl, events.ItemAssistant) {
				b.WriteString(it.Text + "|" + it.Thinking + "|" + it.StopReason + "|")
				for _, c := range it.ToolCalls {
					b.WriteString(c.ID + c.Name + string(c.Args) + c.ArgsRaw + ";")
				}
				if it.Incomplete {
					b.WriteString("incomplete")
				}
				b.WriteString("\n")
			}
			for _, it := range items(tl, events.ItemTool) {
				b.WriteString(it.Tool.CallID + " " + it.Tool.Status.String() + "\n")
			}
			summaries[deltas] = b.String()
		}
		if summaries[false] != summaries[true] {
			t.Errorf("%s: file and live differ:\n%s\n---\n%s", p, summaries[false], summaries[true])
		}
	}
}

func TestIncompleteAndState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		frames     []string
		incomplete bool
		state      events.RunStatus
	}{
		{"stopped mid-turn", []string{chunk("Hel"), `{"type": "status", "status": "stopped"}`}, true, events.RunStopped},
		{"cut mid-turn", []string{chunk("Hel")}, true, events.RunIdle},
		{"completed", []string{chunk("Hi"), complete("m", "Hi"), `{"type": "status", "status": "completed"}`}, false, events.RunIdle},
		{"failed", []string{chunk("Hi"), `{"type": "status", "status": "failed", "message": "boom"}`}, true, events.RunIdle},
		{"stored reasoning alone is whole", []string{streamRow("reasoning", "r1", map[string]any{"reasoning_content": "plan"}, map[string]any{})}, false, events.RunIdle},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tl := run(t, NewDecoder(), tc.frames...)
			turns := items(tl, events.ItemAssistant)
			if len(turns) != 1 || turns[0].Incomplete != tc.incomplete {
				t.Fatalf("turns %d, incomplete want %v", len(turns), tc.incomplete)
			}
			if tl.Status() != tc.state {
				t.Errorf("state %v, want %v", tl.Status(), tc.state)
			}
		})
	}
}

// TestUsageAndStop: usage goes to the last assistant row of its LLM
// response; a terminating tool's stop reason beats the tool_calls finish.
func TestUsageAndStop(t *testing.T) {
	t.Parallel()
	tl := run(t, NewDecoder(),
		streamRow("llm_response_start", "s1", map[string]any{"llm_response_id": "R1"}, map[string]any{}),
		complete("a1", "first"),
		complete("a2", "second", map[string]any{"tool_call_id": "c1", "function_name": "complete", "arguments": map[string]any{}}),
		status(map[string]any{"status_type": "tool_completed", "tool_call_id": "c1", "finish_reason": "agent_terminated"}),
		status(map[string]any{"status_type": "finish", "finish_reason": "tool_calls"}),
		streamRow("llm_response_end", "e1", map[string]any{"llm_response_id": "R1",
			"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 5, "cache_read_input_tokens": 60}}, map[string]any{}),
	)
	turns := items(tl, events.ItemAssistant)
	if len(turns) != 2 {
		t.Fatalf("%d turns", len(turns))
	}
	if turns[0].Usage != nil {
		t.Errorf("usage on the first row of the response")
	}
	u := turns[1].Usage
	if u == nil || u.InputTokens != 100 || u.OutputTokens != 5 || u.CachedTokens != 60 {
		t.Errorf("usage %+v", u)
	}
	if turns[1].StopReason != events.StopTerminated {
		t.Errorf("stop %q", turns[1].StopReason)
	}
	tools := items(tl, events.ItemTool)
	if len(tools) != 1 || tools[0].Tool.Status != events.ToolOK {
		t.Errorf("the completed status settles the call without a result row")
	}
}

func TestDedupe(t *testing.T) {
	t.Parallel()
	a := `{"sequence": 1, "message_id": null, "thread_id": "t", "type": "assistant", "is_llm_message": true, ` +
		`"content": "{\"role\": \"assistant\", \"content\": \"Hi \"}", "metadata": "{\"stream_status\": \"chunk\"}", "_event_id": "5-0"}`
	tl := run(t, NewDecoder(), a, a, complete("m", "Hi "), complete("m", "Hi again"))
	turns := items(tl, events.ItemAssistant)
	if len(turns) != 1 || turns[0].Text != "Hi " {
		t.Fatalf("%d turns", len(turns))
	}
}

// TestHistoryOrder: the same rows newest-first and oldest-first read the
// same.
func TestHistoryOrder(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/history_full.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	read := func(rows []json.RawMessage) string {
		var h history
		for i, r := range rows {
			h.add("message "+string(rune('0'+i)), r)
		}
		h.order()
		var b strings.Builder
		for _, r := range h.rows {
			var o struct {
				MessageID string `json:"message_id"`
			}
			_ = json.Unmarshal(r.raw, &o)
			b.WriteString(o.MessageID + " ")
		}
		return b.String()
	}
	desc := read(doc.Messages)
	asc := make([]json.RawMessage, len(doc.Messages))
	for i, r := range doc.Messages {
		asc[len(asc)-1-i] = r
	}
	if got := read(asc); got != desc {
		t.Errorf("asc %s\ndesc %s", got, desc)
	}
	if !strings.HasPrefix(desc, "sys-1 u-1 ") {
		t.Errorf("not oldest first: %s", desc)
	}
}

// TestBigOutput: a multi-megabyte tool output comes through whole and
// unchanged, from a history file and from a stream.
func TestBigOutput(t *testing.T) {
	t.Parallel()
	var big strings.Builder
	for i := 0; big.Len() < 3<<20; i++ {
		big.WriteString("line ")
		big.WriteString(strings.Repeat("x", i%97))
		big.WriteString(" \u00e9\u2603\n")
	}
	out := big.String()
	toolRow := streamRow("tool", "t1", map[string]any{"role": "tool", "name": "execute_command", "tool_call_id": "c1", "content": out},
		map[string]any{"result": map[string]any{"success": true, "output": out}})
	dir := t.TempDir()

	doc, _ := json.Marshal(map[string]any{"messages": []json.RawMessage{
		json.RawMessage(complete("a1", "run it", map[string]any{"tool_call_id": "c1", "function_name": "execute_command", "arguments": map[string]any{}})),
		json.RawMessage(toolRow)}})
	hist := filepath.Join(dir, "h.json")
	sse := filepath.Join(dir, "s.sse")
	if err := os.WriteFile(hist, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	var s bytes.Buffer
	s.WriteString("data: " + chunk("run it") + "\n\n")
	s.WriteString("data: " + toolRow + "\n\n")
	if err := os.WriteFile(sse, s.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{hist, sse} {
		sample, err := ingest.Sniff(p)
		if err != nil {
			t.Fatal(err)
		}
		if detect(sample) == 0 {
			t.Fatalf("%s not detected", p)
		}
		var got string
		err = Importer().Import(t.Context(), sample, ingest.Options{}, func(ev events.Event) {
			if ev.Kind == events.KindPostToolCall {
				got = ev.Tool.Result.Text
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if got != out {
			t.Errorf("%s: output of %d bytes came back as %d bytes", p, len(out), len(got))
		}
	}
}

// TestDetectOthers: files of other systems are not claimed.
func TestDetectOthers(t *testing.T) {
	t.Parallel()
	others := map[string]string{
		"maria.jsonl":      `{"id":"1","msg":"MessageAdded","message":{"role":"user","content":"hi"}}` + "\n" + `{"id":"2","msg":"PostConversation"}` + "\n",
		"anthropic.sse":    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n",
		"openai.json":      `{"model":"gpt-5","messages":[{"role":"user","content":"hi"}]}`,
		"pynchy.json":      `[{"chat_jid":"c1","type":"message","content":"hi","sender_name":"You"}]`,
		"claude.jsonl":     `{"type":"user","message":{"role":"user","content":"hi"},"session_id":"s"}` + "\n" + `{"type":"assistant","message":{"role":"assistant","content":[]},"session_id":"s"}` + "\n",
		"plain-ping.sse":   "event: ping\ndata: {\"type\": \"ping\"}\n\n",
		"openai-chunk.sse": "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n",
	}
	dir := t.TempDir()
	for name, body := range others {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ingest.Sniff(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := detect(s); n != 0 {
			t.Errorf("%s: suna claims it (%d)", name, n)
		}
	}
	for _, p := range []string{"testdata/stream_run.sse", "testdata/history_full.json", "testdata/stream_lines.lines.jsonl"} {
		s, err := ingest.Sniff(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := detect(s); n < 80 {
			t.Errorf("%s: score %d", p, n)
		}
	}
}

// TestDedupeWholeReplay: a reconnect without last_id replays the whole
// stream from its first frame; every replayed frame, however old, is
// dropped, and the frames after the replay are read.
func TestDedupeWholeReplay(t *testing.T) {
	t.Parallel()
	chunk := func(i int, text string) string {
		return `{"sequence": 1, "message_id": null, "thread_id": "t", "type": "assistant", "is_llm_message": true, ` +
			`"content": "{\"role\": \"assistant\", \"content\": \"` + text + `\"}", "metadata": "{\"stream_status\": \"chunk\"}", ` +
			`"_event_id": "` + strconv.Itoa(1740823200000+7*i) + `-0"}`
	}
	var frames []string
	var want strings.Builder
	for i := range 3000 {
		w := "w" + strconv.Itoa(i) + " "
		frames = append(frames, chunk(i, w))
		want.WriteString(w)
	}
	frames = append(frames, frames...) // the replay
	frames = append(frames, chunk(3000, "end"))
	want.WriteString("end")
	turns := items(run(t, NewDecoder(), frames...), events.ItemAssistant)
	if len(turns) != 1 {
		t.Fatalf("%d turns", len(turns))
	}
	if got := turns[0].Text; got != want.String() {
		t.Fatalf("text of %d bytes, want %d: %.80q…", len(got), want.Len(), got)
	}
}

// TestTurnIDAcrossUserRows: a turn whose id was used by a turn before the
// user's last message is still shown as a turn of its own, and a stop
// reason after it goes to it, not to the older one.
func TestTurnIDAcrossUserRows(t *testing.T) {
	t.Parallel()
	user := streamRow("user", "u1", map[string]any{"role": "user", "content": "go on"}, map[string]any{})
	finish := status(map[string]any{"status_type": "finish", "finish_reason": "length"})
	tl := run(t, NewDecoder(), chunk("first"), `{"type": "llm_response_end"}`, user,
		complete("turn-1", "second"), finish)
	turns := items(tl, events.ItemAssistant)
	if len(turns) != 2 || turns[0].Text != "first" || turns[1].Text != "second" {
		t.Fatalf("%d turns: %+v", len(turns), turns)
	}
	if turns[0].ID == turns[1].ID {
		t.Fatalf("both turns under %q", turns[0].ID)
	}
	if turns[0].StopReason != "" || turns[1].StopReason != events.StopMaxTokens {
		t.Fatalf("stop reasons %q, %q", turns[0].StopReason, turns[1].StopReason)
	}
}

// TestXMLTextInNativeReplies: a thread of the current pipeline calls its
// tools natively and never writes them as XML, so XML-looking text in its
// replies (the model quoting the legacy syntax) is text, not a call;
// a legacy reply's XML still is.
func TestXMLTextInNativeReplies(t *testing.T) {
	t.Parallel()
	quoted := `The old syntax was <function_calls><invoke name="web-search"><parameter name="query">x</parameter></invoke></function_calls> once.`
	native := map[string]any{"tool_call_id": "c1", "function_name": "ls", "arguments": "{}", "source": "native"}
	for _, tc := range []struct {
		name    string
		records []string
		text    string
		calls   []string
	}{
		{"a native reply", []string{complete("m1", quoted, native)}, quoted, []string{"ls"}},
		{"a later reply of a native thread", []string{complete("m1", "Listing.", native), complete("m2", quoted)}, quoted, []string{"ls"}},
		{"a legacy reply", []string{complete("m1", quoted)}, "The old syntax was  once.", []string{"web_search"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tl := run(t, NewDecoder(), tc.records...)
			turns := items(tl, events.ItemAssistant)
			last := turns[len(turns)-1]
			if last.Text != tc.text {
				t.Errorf("text %q, want %q", last.Text, tc.text)
			}
			var calls []string
			for _, it := range turns {
				for _, c := range it.ToolCalls {
					calls = append(calls, c.Name)
				}
			}
			if strings.Join(calls, " ") != strings.Join(tc.calls, " ") {
				t.Errorf("calls %v, want %v", calls, tc.calls)
			}
		})
	}
}
