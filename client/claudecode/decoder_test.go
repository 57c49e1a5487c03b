package claudecode

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
)

func feed(d *Decoder, lines ...string) []events.Event {
	var out []events.Event
	for i, l := range lines {
		out = append(out, d.DecodeAt(fmt.Sprintf("line %d", i+1), []byte(l))...)
	}
	return append(out, d.Flush()...)
}

// timeline applies evs and returns the transcript's items.
func timeline(t *testing.T, evs []events.Event) []*events.Item {
	t.Helper()
	checkEvents(t, evs)
	tl := events.NewTimeline()
	for _, ev := range evs {
		tl.Apply(ev)
	}
	tl.EndOfInput()
	return tl.Items()
}

// asst is an assistant line as stream-json prints it, one block before the
// reply ends: stop_reason null, and message_start's usage.
func asst(id, block string, out int) string { return asstStop(id, block, out, "null") }

// asstStop is an assistant line written with its stop reason (stop is
// JSON): the reply had ended, its usage is final.
func asstStop(id, block string, out int, stop string) string {
	return fmt.Sprintf(`{"type":"assistant","message":{"id":%q,"role":"assistant","content":[%s],"stop_reason":%s,"usage":{"input_tokens":5,"cache_read_input_tokens":100,"output_tokens":%d}},"session_id":"s"}`, id, block, stop, out)
}

const (
	text  = `{"type":"text","text":"Looking."}`
	think = `{"type":"thinking","thinking":"plan","signature":"S"}`
	bash  = `{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"false"}}`
)

func TestMergeBlockLines(t *testing.T) {
	t.Parallel()
	evs := feed(NewDecoder(), asst("m1", think, 1), asst("m1", text, 1), asstStop("m1", bash, 40, `"tool_use"`),
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Exit code 1\n","is_error":true}]},"session_id":"s"}`,
		asstStop("m2", text, 3, `"end_turn"`))
	items := timeline(t, evs)
	if len(items) != 3 {
		t.Fatalf("%d items, want turn, tool, turn", len(items))
	}
	turn := items[0]
	if turn.ID != "m1" || turn.Text != "Looking." || turn.Thinking != "plan" || len(turn.ToolCalls) != 1 {
		t.Errorf("turn = %+v", turn)
	}
	if turn.Usage == nil || turn.Usage.OutputTokens != 40 || turn.Usage.InputTokens != 105 {
		t.Errorf("usage = %+v, want the largest counts", turn.Usage)
	}
	tool := items[1].Tool
	if tool.Status != events.ToolError || tool.Result.Exit() == nil || *tool.Result.Exit() != 1 {
		t.Errorf("tool = %+v", tool)
	}
	// Only final forms carry usage, and each turn has exactly one.
	usages := map[string]int{}
	for _, ev := range evs {
		if ev.Kind == events.KindAssistantMessage && ev.Usage != nil {
			usages[ev.ID]++
		}
	}
	if usages["m1"] != 1 || usages["m2"] != 1 {
		t.Errorf("usage carried by %v forms, want one per turn", usages)
	}
}

// TestUnknownUsage: lines printed block by block, before the reply ended
// (stop_reason null), carry message_start's usage, whose output count is a
// placeholder (1): the turn's usage is unknown, not 1, and a turn that
// asks for tools stopped for them.
func TestUnknownUsage(t *testing.T) {
	t.Parallel()
	items := timeline(t, feed(NewDecoder(), asst("m1", text, 1), asst("m1", bash, 1), asst("m2", text, 1)))
	if items[0].Usage != nil || items[2].Usage != nil {
		t.Errorf("usage = %+v, %+v, want unknown", items[0].Usage, items[2].Usage)
	}
	if items[0].StopReason != events.StopToolUse || items[2].StopReason != "" {
		t.Errorf("stops = %q, %q, want tool_use and unknown", items[0].StopReason, items[2].StopReason)
	}
}

func TestCumulativeLines(t *testing.T) {
	t.Parallel()
	items := timeline(t, feed(NewDecoder(), asst("m1", text, 1), asst("m1", text+","+bash, 9), asst("m1", text+","+bash, 9)))
	if len(items) != 2 || items[0].Text != "Looking." || len(items[0].ToolCalls) != 1 {
		t.Fatalf("items = %+v", items)
	}
}

func TestResult(t *testing.T) {
	t.Parallel()
	result := func(sub string, isErr bool) string {
		return fmt.Sprintf(`{"type":"result","subtype":%q,"is_error":%v,"num_turns":2,"duration_ms":1500,"total_cost_usd":0.25,"usage":{"input_tokens":10,"output_tokens":20},"result":"done","session_id":"s"}`, sub, isErr)
	}
	cases := []struct {
		name  string
		lines []string
		stop  string
		level events.NoticeLevel
	}{
		{"success after text", []string{asst("m1", text, 1), result("success", false)}, events.StopEndTurn, events.LevelInfo},
		{"success after a call stopped for it", []string{asst("m1", bash, 1), result("success", false)}, events.StopToolUse, events.LevelInfo},
		{"max turns", []string{asst("m1", bash, 1), `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`, result("error_max_turns", true)}, events.StopTerminated, events.LevelError},
		{"execution error", []string{asst("m1", text, 1), result("error_during_execution", true)}, events.StopError, events.LevelError},
		{"budget", []string{asst("m1", text, 1), result("error_max_budget_usd", true)}, events.StopTerminated, events.LevelError},
		{"an error reported as success", []string{asst("m1", text, 1), result("success", true)}, events.StopError, events.LevelError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			items := timeline(t, feed(NewDecoder(), c.lines...))
			if items[0].StopReason != c.stop {
				t.Errorf("stop = %q, want %q", items[0].StopReason, c.stop)
			}
			last := items[len(items)-1]
			if last.Kind != events.ItemNotice || last.Level != c.level || !strings.Contains(last.Text, "2 turns, 1.5 s, $0.25") {
				t.Errorf("notice = %+v", last)
			}
			if items[0].Usage != nil && items[0].Usage.HasCost {
				t.Errorf("the run's cost went into a turn: %+v", items[0].Usage)
			}
		})
	}
}

func TestResultOnly(t *testing.T) {
	t.Parallel()
	items := timeline(t, feed(NewDecoder(), `{"type":"result","subtype":"success","is_error":false,"result":"4","total_cost_usd":0.5,"usage":{"input_tokens":3,"output_tokens":1},"session_id":"s"}`))
	if len(items) != 2 || items[0].Text != "4" || items[0].Usage == nil || items[0].Usage.CostUSD != 0.5 || items[0].StopReason != events.StopEndTurn {
		t.Fatalf("items = %+v", items)
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		isErr      bool
		want       string
	}{
		{"Bash", "Exit code 2\nboom", true, "2"},
		{"Bash", "Error: Exit code 137\nKilled", true, "137"},
		{"Bash", "Exit code 1", false, "none"},
		{"Bash", "ok\nExit code 3", true, "none"},
		{"Read", "Exit code 2", true, "none"},
		{"Bash", "Exit code 99999999999", true, "none"},
	}
	for _, c := range cases {
		d := NewDecoder()
		evs := feed(d, fmt.Sprintf(`{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":%q,"input":{}}]}}`, c.name),
			fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":%q,"is_error":%v}]}}`, c.text, c.isErr))
		got := "none"
		for _, ev := range evs {
			if ev.Kind == events.KindPostToolCall && ev.Tool.Result.ExitCode != nil {
				got = fmt.Sprint(*ev.Tool.Result.ExitCode)
			}
		}
		if got != c.want {
			t.Errorf("%s %q (error %v): exit %s, want %s", c.name, c.text, c.isErr, got, c.want)
		}
	}
}

func se(ev string) string { return `{"type":"stream_event","event":` + ev + `,"session_id":"s"}` }

func TestPartialMessages(t *testing.T) {
	t.Parallel()
	lines := []string{
		se(`{"type":"message_start","message":{"id":"m1","usage":{"input_tokens":5,"output_tokens":1}}}`),
		se(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		se(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Looking."}}`),
		se(`{"type":"content_block_stop","index":0}`),
		asst("m1", text, 1),
		se(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":77}}`),
		se(`{"type":"message_stop"}`),
	}
	for _, deltas := range []bool{false, true} {
		evs := feed(&Decoder{Deltas: deltas}, lines...)
		items := timeline(t, evs)
		if len(items) != 1 || items[0].Text != "Looking." || items[0].StopReason != events.StopEndTurn ||
			items[0].Usage == nil || items[0].Usage.OutputTokens != 77 || items[0].Open {
			t.Errorf("deltas %v: items = %+v", deltas, items[0])
		}
		sawDelta := false
		for _, ev := range evs {
			sawDelta = sawDelta || ev.Kind == events.KindTextDelta
		}
		if sawDelta != deltas {
			t.Errorf("deltas %v: saw deltas %v", deltas, sawDelta)
		}
	}

	// Cut: the stream's open message ends Incomplete, once.
	evs := feed(NewDecoder(), lines[:5]...)
	items := timeline(t, evs)
	if len(items) != 1 || !items[0].Incomplete {
		t.Errorf("cut: items = %+v", items)
	}
	// A message known only from the stream.
	items = timeline(t, feed(NewDecoder(), lines[0], lines[1], lines[2], lines[5], lines[6]))
	if len(items) != 1 || items[0].Text != "Looking." || items[0].Incomplete || items[0].Usage.OutputTokens != 77 {
		t.Errorf("stream only: items = %+v", items)
	}
}

// TestSystemAndUnknown: system lines say what they say; bookkeeping lines
// (attachment, mode, api-request*) are silent, and lines of kinds perch
// does not know get one notice in all.
func TestSystemAndUnknown(t *testing.T) {
	t.Parallel()
	evs := feed(NewDecoder(),
		`{"type":"system","subtype":"init","session_id":"s","model":"m","cwd":"/w","tools":["A"],"mcp_servers":[{"name":"x","status":"connected"},{"name":"y","status":"needs-auth"}]}`,
		`{"type":"system","subtype":"compact_boundary","compact_metadata":{"trigger":"manual","pre_tokens":1000}}`,
		`{"type":"system","subtype":"hook_response"}`,
		`{"type":"system","subtype":"hook_response"}`,
		`{"type":"rate_limit_event"}`,
		`{"type":"rate_limit_event"}`,
		`{"type":"a_kind_from_next_year"}`,
		`{"type":"keep_alive"}`,
		`{"type":"attachment","attachment":{"type":"file"}}`,
		`{"type":"mode","mode":"plan"}`,
		`{"type":"api-request-start"}`,
		`{"type":"api-request","requestId":"r"}`,
	)
	var got []string
	for _, ev := range evs {
		got = append(got, ev.NoticeKind+"|"+ev.Text)
	}
	want := []string{
		"info|Claude Code session s: model m, in /w, 1 tool",
		"host|MCP server y: needs-auth",
		"context|Context compacted (manual, from 1000 tokens)",
		`progress|Claude Code hook_response`,
		`info|line 5: Claude Code line kind "rate_limit_event" is not one perch knows; it and any other unknown kinds are left out`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notices:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTodos(t *testing.T) {
	t.Parallel()
	todo := func(id, content string) string {
		return `{"type":"tool_use","id":"` + id + `","name":"TodoWrite","input":{"todos":[{"content":"` + content +
			`","status":"completed","activeForm":"Doing A"},{"content":"B","status":"pending"}]}}`
	}
	result := func(id string, isErr bool, text string) string {
		return fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%q,"is_error":%v}]},"session_id":"s"}`, id, text, isErr)
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  []string // the first todo of each update
	}{
		{"applied when it ran", []string{asst("m1", todo("td", "A"), 1), result("td", false, "Todos have been modified successfully."),
			asst("m2", text, 1)}, []string{"A"}},
		{"a refused call changes nothing", []string{asst("m1", todo("td", "A"), 1), result("td", false, "Todos have been modified successfully."),
			asst("m2", todo("tx", "X"), 1), result("tx", true, "The user doesn't want to proceed with this tool use."),
			asst("m3", text, 1)}, []string{"A"}},
		{"no result, no change", []string{asst("m1", todo("td", "A"), 1)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, ev := range feed(NewDecoder(), tc.lines...) {
				if ev.Kind == events.KindTodoUpdated {
					got = append(got, ev.Todos[0].Content)
					if len(ev.Todos) != 2 || ev.Todos[0].Status != "completed" || ev.Todos[1].ID != "2" {
						t.Errorf("todos = %+v", ev.Todos)
					}
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("updates %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAPIErrorCutsOnlyTheReplyInFlight: an API error cuts off the reply
// still arriving, never a turn that had ended (its tool ran, or it said
// how it stopped).
func TestAPIErrorCutsOnlyTheReplyInFlight(t *testing.T) {
	t.Parallel()
	apiErr := `{"type":"assistant","message":{"id":"e1","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"API Error: 400 refused"}]},"api_error_status":400,"is_api_error_message":true,"session_id":"s"}`
	toolResult := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"1"}]},"session_id":"s"}`
	for _, tc := range []struct {
		name       string
		lines      []string
		incomplete map[string]bool
	}{
		{"after a finished turn and its tool", []string{asst("m1", bash, 1), toolResult, apiErr}, map[string]bool{"m1": false}},
		{"after a turn that said its stop", []string{asstStop("m1", text, 3, `"end_turn"`), apiErr}, map[string]bool{"m1": false}},
		{"in the middle of a reply", []string{asst("m1", bash, 1), toolResult, asst("m2", text, 1), apiErr},
			map[string]bool{"m1": false, "m2": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, it := range timeline(t, feed(NewDecoder(), tc.lines...)) {
				if want, ok := tc.incomplete[it.ID]; ok && it.Incomplete != want {
					t.Errorf("%s incomplete = %v, want %v", it.ID, it.Incomplete, want)
				}
			}
		})
	}
}

// TestSubagentNested: a subagent's lines (parent_tool_use_id) are the
// running output of the Agent call that started it, never top-level turns
// or tools, and its prompt is never the user's message.
func TestSubagentNested(t *testing.T) {
	t.Parallel()
	agent := `{"type":"tool_use","id":"ag","name":"Agent","input":{"description":"Count","prompt":"Count the files","subagent_type":"general-purpose"}}`
	sub := func(typ, content string) string {
		return fmt.Sprintf(`{"type":%q,"message":{"id":"msg_s","role":%q,"content":%s,"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}},"parent_tool_use_id":"ag","session_id":"s"}`, typ, typ, content)
	}
	evs := feed(NewDecoder(), asst("m1", agent, 1),
		`{"type":"system","subtype":"task_started","task_id":"k","tool_use_id":"ag","subagent_type":"general-purpose","is_backgrounded":false,"session_id":"s"}`,
		sub("user", `[{"type":"text","text":"Count the files"}]`),
		sub("assistant", `[{"type":"tool_use","id":"sb","name":"Bash","input":{"command":"ls | wc -l"}}]`),
		sub("user", `[{"type":"tool_result","tool_use_id":"sb","content":"0"}]`),
		sub("assistant", `[{"type":"text","text":"None."}]`),
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"ag","content":"None."}]},"parent_tool_use_id":null,"session_id":"s"}`,
		asstStop("m2", text, 3, `"end_turn"`))
	var running strings.Builder
	for _, ev := range evs {
		if ev.Kind == events.KindToolOutputDelta && ev.Tool.Call.ID == "ag" {
			running.WriteString(ev.Text)
		}
	}
	if want := "Subagent general-purpose started\n→ Bash ls | wc -l\n← 0\nNone.\n"; running.String() != want {
		t.Errorf("running output %q, want %q", running.String(), want)
	}
	items := timeline(t, evs)
	var kinds []string
	for _, it := range items {
		kinds = append(kinds, it.Kind.String()+":"+it.ID)
		if it.Kind == events.ItemUser {
			t.Errorf("a user turn: %q", it.Text)
		}
	}
	if got := strings.Join(kinds, " "); got != "assistant:m1 tool:ag assistant:m2" {
		t.Errorf("items %s, want the two turns and the Agent call", got)
	}
	if r := items[1].Tool.Result; r == nil || r.Text != "None." {
		t.Errorf("Agent result = %+v", r)
	}
}

// TestTaskTools: Claude Code 2.1 plans with TaskCreate/TaskUpdate; the
// todo list follows their results (ids from "Task #N created").
func TestTaskTools(t *testing.T) {
	t.Parallel()
	create := func(id, subject string) string {
		return fmt.Sprintf(`{"type":"tool_use","id":%q,"name":"TaskCreate","input":{"subject":%q,"description":"d","activeForm":"a"}}`, id, subject)
	}
	result := func(id, text string) string {
		return fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%q}]},"parent_tool_use_id":null,"session_id":"s"}`, id, text)
	}
	evs := feed(NewDecoder(), asst("m1", create("c1", "Write"), 1), asst("m1", create("c2", "Build"), 1),
		result("c1", "Task #1 created successfully: Write"), result("c2", "Task #2 created successfully: Build"),
		asst("m2", `{"type":"tool_use","id":"u1","name":"TaskUpdate","input":{"taskId":"2","status":"completed"}}`, 1),
		result("u1", "Updated task #2 status"))
	tl := events.NewTimeline()
	for _, ev := range evs {
		tl.Apply(ev)
	}
	var got []string
	for _, td := range tl.Todos() {
		got = append(got, td.ID+" "+td.Content+" "+td.Status)
	}
	if s := strings.Join(got, ", "); s != "1 Write pending, 2 Build completed" {
		t.Errorf("todos: %s", s)
	}
}

// TestIDsFarApart: a line that repeats the uuid of one thousands of lines
// before is still a turn of its own, under an id of its own.
func TestIDsFarApart(t *testing.T) {
	t.Parallel()
	userLine := func(uuid, text string) string {
		return fmt.Sprintf(`{"type":"user","message":{"role":"user","content":%q},"uuid":%q,"session_id":"s"}`, text, uuid)
	}
	lines := []string{userLine("u0", "first")}
	for i := 1; i <= 5000; i++ {
		lines = append(lines, userLine(fmt.Sprintf("u%d", i), "more"))
	}
	lines = append(lines, userLine("u0", "again"))
	evs := feed(NewDecoder(), lines...)
	last := evs[len(evs)-1]
	if len(evs) != len(lines) || evs[0].ID != "u0" || last.ID != "u0#2" || last.Text != "again" {
		t.Errorf("%d events (want %d), first id %q, last %q %q; want u0, then u0#2 again", len(evs), len(lines), evs[0].ID, last.ID, last.Text)
	}
}

// TestNotTheUsersWords: user-role lines Claude Code wrote itself (isMeta,
// isSynthetic) are its notices, and a peer's message (sent through the
// messaging socket) says where it came from; only the prompt typed is the
// user's.
func TestNotTheUsersWords(t *testing.T) {
	t.Parallel()
	evs := feed(NewDecoder(),
		`{"type":"user","message":{"role":"user","content":"typed"},"uuid":"u1"}`,
		`{"type":"user","isMeta":true,"message":{"role":"user","content":"<local-command-caveat>Caveat: generated by commands</local-command-caveat>"},"uuid":"u2"}`,
		`{"type":"user","isSynthetic":true,"message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]},"uuid":"u3"}`,
		`{"type":"user","isMeta":true,"origin":{"kind":"peer","from":"perch"},"message":{"role":"user","content":"run the tests"},"uuid":"u4"}`,
	)
	var got []string
	for _, it := range timeline(t, evs) {
		switch it.Kind {
		case events.ItemUser:
			got = append(got, "user|"+it.Text)
		case events.ItemNotice:
			got = append(got, "notice|"+it.Text)
		}
	}
	want := []string{
		"user|typed",
		"notice|Claude Code: <local-command-caveat>Caveat: generated by commands</local-command-caveat>",
		"notice|Claude Code: [Request interrupted by user]",
		"notice|A message from perch, sent through Claude Code's messaging socket:",
		"user|run the tests",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestModelAndTimeFromLines: a session file's reply names its model (said
// once, for the views' heading) and its lines their time (the items'
// times, an export's time span).
func TestModelAndTimeFromLines(t *testing.T) {
	d := NewDecoder()
	var evs []events.Event
	for _, l := range []string{
		`{"type":"user","timestamp":"2026-12-07T02:00:00.000Z","message":{"role":"user","content":"hi"}}`,
		`{"type":"assistant","timestamp":"2026-12-07T02:00:05.500Z","message":{"id":"m1","model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn"}}`,
		`{"type":"assistant","timestamp":"2026-12-07T02:00:09.000Z","message":{"id":"m2","model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"again"}],"stop_reason":"end_turn"}}`,
	} {
		evs = append(evs, d.Decode([]byte(l))...)
	}
	evs = append(evs, d.Flush()...)
	models := 0
	for _, e := range evs {
		if e.Kind == events.KindModelLoaded {
			models++
			if e.Model != "claude-sonnet-4-5" {
				t.Errorf("model %q", e.Model)
			}
		}
		if e.Created.IsZero() {
			t.Errorf("%v event without its line's time", e.Kind)
		}
	}
	if models != 1 {
		t.Errorf("%d model events, want one", models)
	}
}
