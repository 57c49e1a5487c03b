package suna

import (
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
)

func TestLegacyResult(t *testing.T) {
	for _, tc := range []struct {
		in, out    string
		ok, legacy bool
	}{
		{`<tool_result> <web-search> ToolResult(success=True, output='Oracle was founded in 1977.') </web-search> </tool_result>`, "Oracle was founded in 1977.", true, true},
		{` <ask> ToolResult(success=False, output="can't \n do") </ask> `, "can't \n do", false, true},
		{`Result for create_file: ToolResult(success=True, output='a\\b\'c')`, `a\b'c`, true, true},
		{`ToolResult(success=True, output=None)`, "", true, true},
		{`ToolResult(success=True, output={'a': 1})`, "", false, false}, // not a string: as written
		{`ToolResult(success='yes', output='x')`, "", false, false},
		{`<a> ToolResult(success=True, output='x') </b>`, "", false, false},
		{`<tool_result> ToolResult(success=True, output='x') and more </tool_result>`, "", false, false},
		{`Result for a b: ToolResult(success=True, output='x')`, "", false, false},
		{`OtherResult(success=True, output='x')`, "", false, false},
		{`plain text`, "", false, false},
	} {
		out, ok, legacy := legacyResult(tc.in)
		if out != tc.out || ok != tc.ok || legacy != tc.legacy {
			t.Errorf("legacyResult(%q) = %q, %v, %v; want %q, %v, %v", tc.in, out, ok, legacy, tc.out, tc.ok, tc.legacy)
		}
	}
}

// A legacy tool row on a live stream is unwrapped as on import.
func TestLegacyResultLive(t *testing.T) {
	d := &Decoder{Deltas: true}
	tl := run(t, d,
		streamRow("assistant", "a-1", map[string]any{"role": "assistant",
			"content": "Looking.\n<function_calls>\n<invoke name=\"web-search\">\n<parameter name=\"query\">q</parameter>\n</invoke>\n</function_calls>"},
			map[string]any{"stream_status": "complete"}),
		streamRow("tool", "t-1", map[string]any{"role": "user",
			"content": "<tool_result> <web-search> ToolResult(success=False, output='rate limited') </web-search> </tool_result>"},
			map[string]any{"tool_call_id": "xml_tool_index0_a-1"}))
	tools := items(tl, events.ItemTool)
	if len(tools) != 1 || tools[0].Tool.Result == nil || tools[0].Tool.Result.Text != "rate limited" ||
		tools[0].Tool.Status != events.ToolError {
		t.Fatalf("tools: %+v", tools)
	}
}

// A history's tool row older than the assistant row that calls it waits
// for it; one whose call never comes is shown at the end of its run.
func TestToolWaitsForItsCall(t *testing.T) {
	d := NewDecoder()
	tl := run(t, d,
		streamRow("user", "u-1", map[string]any{"role": "user", "content": "go"}, map[string]any{}),
		streamRow("tool", "t-1", map[string]any{"role": "tool", "tool_call_id": "c-1", "content": "one"},
			map[string]any{"assistant_message_id": "a-1"}),
		streamRow("tool", "t-2", map[string]any{"role": "tool", "tool_call_id": "c-lost", "content": "lost"}, map[string]any{}),
		streamRow("assistant", "a-1", map[string]any{"role": "assistant", "content": "calling",
			"tool_calls": []any{map[string]any{"id": "c-1", "type": "function", "function": map[string]any{"name": "x", "arguments": `{"a":1}`}}}},
			map[string]any{}),
		streamRow("user", "u-2", map[string]any{"role": "user", "content": "next"}, map[string]any{}))
	var got []string
	for _, it := range tl.Items() {
		s := it.ID
		if it.Kind == events.ItemTool {
			s += "=" + string(it.Tool.Call.Args)
		}
		got = append(got, s)
	}
	want := []string{"u-1", "a-1", `c-1={"a":1}`, "c-lost=", "u-2"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("items %v, want %v", got, want)
	}
}

// On a live stream of the current pipeline, a turn of tool calls only
// runs its tool before its complete row: the turn still comes first.
func TestLiveToolAfterItsTurn(t *testing.T) {
	d := &Decoder{Deltas: true}
	tl := run(t, d,
		streamRow("assistant", "", map[string]any{"role": "assistant", "content": ""},
			map[string]any{"stream_status": "tool_call_chunk", "tool_calls": []any{map[string]any{
				"tool_call_id": "c-1", "function_name": "x", "arguments_delta": `{"a":1}`, "is_delta": true}}}),
		streamRow("status", "", map[string]any{"status_type": "tool_started", "tool_call_id": "c-1", "function_name": "x"}, map[string]any{}),
		streamRow("tool", "t-1", map[string]any{"role": "tool", "tool_call_id": "c-1", "content": "done"},
			map[string]any{"assistant_message_id": "a-1"}),
		streamRow("assistant", "a-1", map[string]any{"role": "assistant", "content": "",
			"tool_calls": []any{map[string]any{"id": "c-1", "type": "function", "function": map[string]any{"name": "x", "arguments": `{"a":1}`}}}},
			map[string]any{"stream_status": "complete"}))
	its := tl.Items()
	if len(its) != 2 || its[0].Kind != events.ItemAssistant || its[1].Kind != events.ItemTool ||
		string(its[1].Tool.Call.Args) != `{"a":1}` || its[1].Tool.Result == nil || its[1].Tool.Result.Text != "done" {
		for _, it := range its {
			t.Logf("%v %s", it.Kind, it.ID)
		}
		t.Fatal("want the turn, then its tool with arguments and result")
	}
}
