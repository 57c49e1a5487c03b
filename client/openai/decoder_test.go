package openai

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// decodeAll feeds stream lines (or records) to a fresh decoder.
func decodeAll(lines ...string) []events.Event { return decodeWith(NewDecoder(), lines...) }

func decodeWith(d *Decoder, lines ...string) []events.Event {
	var out []events.Event
	for i, l := range lines {
		out = append(out, d.DecodeLine("line "+strconv.Itoa(i+1), []byte(l))...)
	}
	return append(out, d.Flush()...)
}

func finals(evs []events.Event) []events.Event {
	var out []events.Event
	for _, ev := range evs {
		if ev.Kind == events.KindAssistantMessage {
			out = append(out, ev)
		}
	}
	return out
}

func chunkLine(id, delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `data: {"id":"` + id + `","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`
}

func toolDelta(index int, id, name, args string) string {
	o := map[string]any{"index": index, "function": map[string]any{"arguments": args}}
	if id != "" {
		o["id"] = id
		o["function"].(map[string]any)["name"] = name
	}
	b, _ := json.Marshal(map[string]any{"tool_calls": []any{o}})
	return string(b)
}

func TestArgsText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		frags    []string
		finished bool
		want     string
	}{
		{"joined", []string{`{"q":`, `1}`}, true, `{"q":1}`},
		{"repeat after deltas", []string{`{"q":`, `1}`, `{"q":1}`}, true, `{"q":1}`},
		{"repeat, other spacing", []string{`{"q":`, `1}`, `{ "q" : 1 }`}, false, `{ "q" : 1 }`},
		{"partial then whole", []string{`{"q":`, `{"q":1}`}, false, `{"q":1}`},
		{"cut, nested object last", []string{`{"a":`, `{"b":1}`}, false, `{"a":{"b":1}`},
		{"finished, nested object last", []string{`{"a":`, `{"b":1}`}, true, `{"b":1}`},
		{"scalar last never wins", []string{`{"q":`, `1`}, true, `{"q":1`},
		{"one fragment invalid", []string{`{"q":`}, true, `{"q":`},
		{"empty", nil, true, ``},
	}
	for _, c := range cases {
		cb := &callBuf{}
		for _, f := range c.frags {
			cb.args.WriteString(f)
			cb.last = f
			cb.frags++
		}
		if got := cb.argsText(c.finished); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestAlign(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		h, r     []uint64
		start    int
		diverged bool
	}{
		{"first request", nil, []uint64{1, 2}, 0, false},
		{"continuation", []uint64{1, 2, 3}, []uint64{1, 2, 3, 4, 5}, 3, false},
		{"same again", []uint64{1, 2}, []uint64{1, 2}, 2, false},
		{"retry of an older state", []uint64{1, 2, 3}, []uint64{1, 2}, 2, false},
		{"trimmed window", []uint64{1, 2, 3, 4, 5}, []uint64{1, 4, 5, 6}, 3, false},
		{"trimmed, nothing new", []uint64{1, 2, 3, 4}, []uint64{1, 3, 4}, 3, false},
		{"new conversation", []uint64{1, 2, 3}, []uint64{1, 9}, 1, true},
		{"edited history", []uint64{1, 2, 3, 4}, []uint64{1, 2, 7, 4, 8}, 2, true},
		{"window that does not reach the end", []uint64{1, 2, 3, 4}, []uint64{1, 3, 9}, 1, true},
	}
	for _, c := range cases {
		start, div := align(c.h, c.r)
		if start != c.start || div != c.diverged {
			t.Errorf("%s: align = %d, %v; want %d, %v", c.name, start, div, c.start, c.diverged)
		}
	}
}

func TestStreamToolCallKeys(t *testing.T) {
	t.Parallel()
	evs := finals(decodeAll(
		chunkLine("r1", toolDelta(0, "call_a", "f", `{"x":`), ""),
		chunkLine("r1", toolDelta(0, "", "", `1}`), ""),
		// A server that numbers every call 0: a new id is a new call.
		chunkLine("r1", toolDelta(0, "call_b", "g", `{}`), ""),
		// Without index or id, a fragment continues the last call.
		chunkLine("r1", `{"tool_calls":[{"function":{"arguments":""}}]}`, "tool_calls"),
		"data: [DONE]",
	))
	if len(evs) != 1 || len(evs[0].ToolCalls) != 2 {
		t.Fatalf("got %+v", evs)
	}
	a, b := evs[0].ToolCalls[0], evs[0].ToolCalls[1]
	if a.ID != "call_a" || a.Name != "f" || string(a.Args) != `{"x":1}` || b.ID != "call_b" || b.Name != "g" || string(b.Args) != `{}` {
		t.Errorf("calls %+v / %+v", a, b)
	}
}

func TestStreamTurns(t *testing.T) {
	t.Parallel()
	// Chunk ids that change before the finish reason: still one turn.
	evs := finals(decodeAll(
		chunkLine("a1", `{"content":"Hel"}`, ""),
		chunkLine("a2", `{"content":"lo"}`, "stop"),
		// A new id after the finish reason: a new response, no [DONE].
		chunkLine("b1", `{"content":"Again"}`, "stop"),
		// The same id once more in a new stream: a distinct turn id.
		"data: [DONE]",
		chunkLine("b1", `{"content":"Third"}`, "stop"),
	))
	if len(evs) != 3 {
		t.Fatalf("%d turns: %+v", len(evs), evs)
	}
	want := []struct{ id, text string }{{"a1", "Hello"}, {"b1", "Again"}, {"b1#2", "Third"}}
	for i, w := range want {
		if evs[i].ID != w.id || evs[i].Text != w.text || evs[i].Incomplete {
			t.Errorf("turn %d: %s %q incomplete=%v; want %s %q", i, evs[i].ID, evs[i].Text, evs[i].Incomplete, w.id, w.text)
		}
	}
}

func TestStreamCutIsIncomplete(t *testing.T) {
	t.Parallel()
	live := NewDecoder()
	live.Live = true
	evs := decodeWith(live,
		chunkLine("c", `{"content":"Writing"}`, ""),
		chunkLine("c", toolDelta(0, "call_w", "write", `{"path":"a`), ""),
	)
	f := finals(evs)
	if len(f) != 1 || !f[0].Incomplete || f[0].ToolCalls[0].ArgsErr == "" || f[0].ToolCalls[0].ArgsRaw != `{"path":"a` {
		t.Fatalf("final %+v", f)
	}
	// Live, the turn opens, then its deltas come, with the turn's id.
	if evs[0].Kind != events.KindTextDelta || evs[0].ID != "c" || evs[1].Kind != events.KindTextDelta || evs[1].Text != "Writing" {
		t.Errorf("first events %+v", evs[:2])
	}
}

func TestRequestMessages(t *testing.T) {
	t.Parallel()
	d := NewDecoder()
	evs := d.Decode("element 1", []byte(`{"messages":[
		{"role":"assistant","content":null,"function_call":{"name":"f","arguments":"{}"}},
		{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"g","arguments":"[1]"}}]},
		{"role":"function","name":"f","content":"from f"},
		{"role":"tool","content":"from g, no id"},
		{"role":"tool","tool_call_id":"x","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}
	]}`))
	var results []string
	for _, ev := range evs {
		if ev.Kind == events.KindPostToolCall {
			results = append(results, ev.Tool.Call.ID+"="+ev.Tool.Name+":"+ev.Tool.Result.Text)
		}
	}
	want := "msg-1:0=f:from f|msg-2:0=g:from g, no id|x=:ab"
	if strings.Join(results, "|") != want {
		t.Errorf("results %q, want %q", strings.Join(results, "|"), want)
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, content string
		min, max      int
	}{
		{"chunk sse", "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[]}\n\ndata: [DONE]\n\n", 90, 100},
		{"chunks without blank lines", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n", 90, 100},
		{"chunk jsonl", "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n{\"choices\":[]}\n", 90, 100},
		{"response", `{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`, 90, 100},
		{"request with tool calls", `{"messages":[{"role":"assistant","tool_calls":[]},{"role":"tool","tool_call_id":"c","content":"x"}]}`, 70, 80},
		{"request, tools first", `{"tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"hi"}]}`, 70, 80},
		{"bare messages", `{"messages":[{"role":"user","content":"hi"}]}`, 1, 25},
		{"anthropic request", `{"model":"claude","system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}]}`, 0, 0},
		{"anthropic stream", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n\n", 0, 0},
		{"anthropic response", `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"}`, 0, 0},
		{"claude code stream-json", "{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n{\"type\":\"result\",\"subtype\":\"success\"}\n", 0, 0},
		{"codex", "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"turn.started\"}\n", 0, 0},
		{"codex legacy", "{\"id\":\"0\",\"msg\":{\"type\":\"agent_message\",\"message\":\"hi\"}}\n{\"id\":\"0\",\"msg\":{\"type\":\"task_complete\"}}\n", 0, 0},
		{"maria", "{\"id\":1,\"msg\":\"MessageAdded\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n{\"id\":2,\"msg\":\"PostConversation\"}\n", 0, 0},
	}
	for _, c := range cases {
		s := ingest.SniffBytes("x", []byte(c.content), true)
		if got := detect(s); got < c.min || got > c.max {
			t.Errorf("%s: detect = %d, want %d..%d", c.name, got, c.min, c.max)
		}
	}
}

// TestMultiMBOutput: a tool result of several MB comes out byte for byte.
func TestMultiMBOutput(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef\n", 6<<20/17)
	doc, _ := json.Marshal(map[string]any{"messages": []any{
		map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c", "type": "function",
			"function": map[string]any{"name": "cat", "arguments": "{}"}}}},
		map[string]any{"role": "tool", "tool_call_id": "c", "content": big},
	}})
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := ingest.Sniff(path)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	err = importFile(t.Context(), s, ingest.Options{}, func(ev events.Event) {
		if ev.Kind == events.KindPostToolCall {
			got = ev.Tool.Result.Text
		}
	})
	if err != nil || got != big {
		t.Fatalf("output of %d bytes, want %d (err %v)", len(got), len(big), err)
	}
}

// TestFarApart: what a decoder keeps about the whole file still holds
// thousands of turns later: a response id seen long before gets a
// distinct turn id, and a result names the call it answers when its
// message names none, a few thousand calls after it.
func TestFarApart(t *testing.T) {
	t.Parallel()
	d := NewDecoder()
	response := func(id, call string) string {
		return `{"id":"` + id + `","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant",` +
			`"tool_calls":[{"id":"` + call + `","type":"function","function":{"name":"tool-` + call + `","arguments":"{}"}}]}}]}`
	}
	lines := []string{response("r-0", "c-0")}
	for i := range 2000 { // turns without calls: more turn ids than the set's recent map holds
		lines = append(lines, `{"id":"plain-`+strconv.Itoa(i)+`","choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}`)
	}
	for i := 1; i <= 3000; i++ {
		n := strconv.Itoa(i)
		lines = append(lines, response("r-"+n, "c-"+n),
			`{"role":"tool","tool_call_id":"c-`+n+`","content":"done"}`)
	}
	lines = append(lines, response("r-0", "c-again"), `{"role":"tool","tool_call_id":"c-0","content":"late"}`)
	evs := decodeWith(d, lines...)
	f := finals(evs)
	if got := f[len(f)-1].ID; got != "r-0#2" {
		t.Errorf("a response id repeated 5000 turns later: turn id %s, want r-0#2", got)
	}
	last := evs[len(evs)-1]
	if last.Kind != events.KindPostToolCall || last.Tool.Call.ID != "c-0" || last.Tool.Name != "tool-c-0" {
		t.Errorf("a result 3000 calls after its call: %+v, want named tool-c-0", last.Tool)
	}
}
