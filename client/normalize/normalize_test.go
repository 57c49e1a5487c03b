package normalize

import (
	"encoding/json"
	"testing"

	"github.com/perch-tui/perch/events"
)

func TestUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in                        string
		input, output, cached, total    int64
		write, reasoning                int64
		hasWrite, hasReasoning, hasCost bool
		cost                            float64
		isNil                           bool
	}{
		{name: "openai", in: `{"prompt_tokens":1200,"completion_tokens":80,"total_tokens":1280,"prompt_tokens_details":{"cached_tokens":1000},"completion_tokens_details":{"reasoning_tokens":40}}`,
			input: 1200, output: 80, cached: 1000, total: 1280, reasoning: 40, hasReasoning: true},
		{name: "anthropic", in: `{"input_tokens":200,"output_tokens":80,"cache_creation_input_tokens":500,"cache_read_input_tokens":1000}`,
			input: 1700, output: 80, cached: 1000, total: 1780, write: 500, hasWrite: true},
		{name: "litellm hybrid counts each once", in: `{"prompt_tokens":3000,"completion_tokens":10,"total_tokens":3010,"cache_read_input_tokens":900,"cache_creation_input_tokens":100,"prompt_tokens_details":{"cached_tokens":1000}}`,
			input: 3000, output: 10, cached: 1000, total: 3010, write: 100, hasWrite: true},
		{name: "openrouter", in: `{"prompt_tokens":100,"completion_tokens":5,"cost":0.0031,"prompt_tokens_details":{"cached_tokens":90,"cache_write_tokens":10}}`,
			input: 100, output: 5, cached: 90, total: 105, write: 10, hasWrite: true, hasCost: true, cost: 0.0031},
		{name: "attocode", in: `{"input_tokens":10,"output_tokens":2,"total_tokens":12,"cache_creation_tokens":3,"cache_read_tokens":4,"cost":0.5}`,
			input: 17, output: 2, cached: 4, total: 12, write: 3, hasWrite: true, hasCost: true, cost: 0.5},
		{name: "camel", in: `{"inputTokens":"10","outputTokens":2.0,"cacheReadTokens":5,"cacheWriteTokens":1}`,
			input: 16, output: 2, cached: 5, total: 18, write: 1, hasWrite: true},
		{name: "list summed", in: `[{"prompt_tokens":1,"completion_tokens":2},{"prompt_tokens":3,"completion_tokens":4}]`,
			input: 4, output: 6, total: 10},
		{name: "null", in: `null`, isNil: true},
		{name: "no counts", in: `{"service_tier":"standard"}`, isNil: true},
		{name: "nan", in: `{"prompt_tokens":null,"completion_tokens":"x","total_tokens":5}`, total: 5},
		{name: "codex", in: `{"input_tokens":900,"cached_input_tokens":800,"output_tokens":30,"reasoning_output_tokens":12}`,
			input: 900, output: 30, cached: 800, total: 930, reasoning: 12, hasReasoning: true},
		{name: "responses api", in: `{"input_tokens":500,"input_tokens_details":{"cached_tokens":400},"output_tokens":20,"output_tokens_details":{"reasoning_tokens":8}}`,
			input: 500, output: 20, cached: 400, total: 520, reasoning: 8, hasReasoning: true},
	}
	for _, c := range cases {
		u := Usage(json.RawMessage(c.in))
		if c.isNil {
			if u != nil {
				t.Errorf("%s: want nil, got %+v", c.name, u)
			}
			continue
		}
		if u == nil {
			t.Errorf("%s: nil", c.name)
			continue
		}
		want := events.Usage{InputTokens: c.input, OutputTokens: c.output, CachedTokens: c.cached, TotalTokens: c.total,
			CacheWriteTokens: c.write, ReasoningTokens: c.reasoning, CostUSD: c.cost,
			HasCacheWrite: c.hasWrite, HasReasoning: c.hasReasoning, HasCost: c.hasCost}
		if *u != want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, *u, want)
		}
	}
}

func TestStop(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"stop": "end_turn", "end_turn": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use",
		"length": "max_tokens", "model_context_window_exceeded": "max_tokens", "content_filter": "filtered",
		"refusal": "refusal", "pause_turn": "paused", "agent_terminated": "terminated", "cancelled": "cancelled",
		"stop_sequence": "stop_sequence", "error_during_execution": "error", "weird": "other", "": "",
	} {
		if got := Stop(in); got != want {
			t.Errorf("Stop(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseContent(t *testing.T) {
	t.Parallel()
	png := `iVBORw0KGgo` + string(make([]byte, 0))
	cases := []struct{ name, in, text, thinking string }{
		{"string", `"Hello"`, "Hello", ""},
		{"typed parts", `[{"type":"text","text":"Let me "},{"type":"text","text":"look."}]`, "Let me look.", ""},
		{"untyped", `[{"text":"Hi"}]`, "Hi", ""},
		{"bare strings", `["a","b"]`, "ab", ""},
		{"null", `null`, "", ""},
		{"thinking", `[{"type":"thinking","thinking":"hmm","signature":"x"},{"type":"text","text":"ok"}]`, "ok", "hmm"},
		{"redacted", `[{"type":"redacted_thinking","data":"zz"}]`, "", "[redacted]"},
		{"anthropic image", `[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + png + `AAAA"}}]`, "[image/png 11 B]", ""},
		{"openai data url", `[{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,` + string(make([]byte, 0)) + `QUJD"}}]`, "[image/jpeg 3 B]", ""},
		{"openai link", `[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]`, "[image https://x/y.png]", ""},
		{"refusal", `[{"type":"refusal","refusal":"no"}]`, "no", ""},
		{"unknown", `[{"type":"web_search_tool_result","content":[]}]`, "[web_search_tool_result]", ""},
	}
	for _, c := range cases {
		got := ParseContent(json.RawMessage(c.in))
		if got.Text != c.text || got.Thinking != c.thinking {
			t.Errorf("%s: text %q thinking %q; want %q %q", c.name, got.Text, got.Thinking, c.text, c.thinking)
		}
	}
	c := ParseContent(json.RawMessage(`[{"type":"text","text":"Reading"},{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a"}},{"type":"tool_result","tool_use_id":"toolu_0","content":[{"type":"text","text":"ok"}],"is_error":true}]`))
	if len(c.ToolCalls) != 1 || c.ToolCalls[0].ID != "toolu_1" || string(c.ToolCalls[0].Args) != `{"path":"a"}` {
		t.Errorf("tool calls %+v", c.ToolCalls)
	}
	if len(c.Results) != 1 || c.Results[0].Text != "ok" || !c.Results[0].IsError || !c.Results[0].Known {
		t.Errorf("results %+v", c.Results)
	}
}

func TestUnwrapOnlyMessageShaped(t *testing.T) {
	t.Parallel()
	if o := Unwrap(json.RawMessage(`"{\"role\": \"user\", \"content\": \"Hi\"}"`), "role"); o == nil || StrField(o, "role") != "user" {
		t.Errorf("message-shaped string not unwrapped: %v", o)
	}
	if o := Unwrap(json.RawMessage(`"{\"answer\": 42}"`), "role", "content"); o != nil {
		t.Errorf("plain JSON text unwrapped: %v", o)
	}
	if o := Unwrap(json.RawMessage(`"just text"`), "role"); o != nil {
		t.Errorf("text unwrapped")
	}
	if o := Unwrap(json.RawMessage(`"{\"role\": \"x\", \"v\": NaN}"`), "role"); o == nil {
		t.Errorf("python NaN inside not repaired")
	}
}

func TestLenientScalars(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{`true`: true, `"True"`: true, `"yes"`: true, `1`: true, `"0"`: false, `false`: false, `"No"`: false} {
		if v, ok := Bool(json.RawMessage(in)); !ok || v != want {
			t.Errorf("Bool(%s) = %v %v", in, v, ok)
		}
	}
	if _, ok := Bool(json.RawMessage(`"maybe"`)); ok {
		t.Error("maybe is a bool")
	}
	for in, want := range map[string]int64{`12`: 12, `"12"`: 12, `12.0`: 12, `" 7 "`: 7} {
		if v, ok := Int(json.RawMessage(in)); !ok || v != want {
			t.Errorf("Int(%s) = %v %v", in, v, ok)
		}
	}
	for _, in := range []string{`null`, `"x"`, `1e300`, `{}`, ``} {
		if _, ok := Int(json.RawMessage(in)); ok {
			t.Errorf("Int(%s) ok", in)
		}
	}
}
