package anthropic

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/recent"
)

// req is a request body of the given messages (JSON).
func req(msgs ...string) string {
	return `{"model":"claude-x","max_tokens":10,"messages":[` + strings.Join(msgs, ",") + `]}`
}

func user(text string) string { return fmt.Sprintf(`{"role":"user","content":%q}`, text) }
func asst(text string) string { return fmt.Sprintf(`{"role":"assistant","content":%q}`, text) }
func resp(id, text string) string {
	return fmt.Sprintf(`{"id":%q,"type":"message","role":"assistant","content":[{"type":"text","text":%q}],"stop_reason":"end_turn"}`, id, text)
}

// shown is what a log shows: "u:text", "a:text", "notice".
func shown(docs ...string) string {
	c := NewConversation()
	var out []string
	for i, d := range docs {
		for _, ev := range c.DecodeAt(fmt.Sprintf("element %d", i+1), []byte(d)) {
			switch ev.Kind {
			case events.KindUserMessage:
				out = append(out, "u:"+ev.Text)
			case events.KindAssistantMessage:
				out = append(out, "a:"+ev.Text)
			case events.KindPostToolCall:
				out = append(out, "r:"+ev.Tool.Call.ID)
			case events.KindNotice:
				out = append(out, "notice")
			}
		}
	}
	return strings.Join(out, " ")
}

func TestConversationDedupe(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		docs []string
		want string
	}{
		{"a request alone", []string{req(user("hi"), asst("yo"), user("bye"))}, "u:hi a:yo u:bye"},
		{"requests that extend each other", []string{
			req(user("q1")), resp("m1", "a1"),
			req(user("q1"), asst("a1"), user("q2")), resp("m2", "a2"),
		}, "u:q1 a:a1 u:q2 a:a2"},
		{"a retried request adds nothing", []string{
			req(user("q1")), req(user("q1")), resp("m1", "a1"),
		}, "u:q1 a:a1"},
		{"a response logged twice shows once", []string{
			req(user("q1")), resp("m1", "a1"), resp("m1", "a1"),
			req(user("q1"), asst("a1"), user("q2")),
		}, "u:q1 a:a1 u:q2"},
		{"a regenerated answer shows both answers", []string{
			req(user("q1")), resp("m1", "a1"), req(user("q1")), resp("m2", "a1 again"),
			req(user("q1"), asst("a1 again"), user("q2")),
		}, "u:q1 a:a1 a:a1 again u:q2"},
		{"an edited message", []string{
			req(user("q1")), resp("m1", "a1"), req(user("q1"), asst("a1"), user("q2")),
			req(user("q1"), asst("a1"), user("q2 edited")),
		}, "u:q1 a:a1 u:q2 notice u:q2 edited"},
		{"a window that dropped old messages", []string{
			req(user("q1"), asst("a1"), user("q2")), resp("m2", "a2"),
			req(user("q2"), asst("a2"), user("q3")),
		}, "u:q1 a:a1 u:q2 a:a2 notice u:q3"},
		{"whitespace and thinking do not make a message new", []string{
			req(user("q1")),
			`{"id":"m1","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"a1 "},{"type":"tool_use","id":"c1","name":"x","input":{}}]}`,
			req(user("q1"), `{"role":"assistant","content":[{"type":"text","text":"a1"},{"type":"tool_use","id":"c1","name":"x","input":{"changed":1}}]}`,
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"out"}]}`),
			req(user("q1"), `{"role":"assistant","content":[{"type":"text","text":"a1"},{"type":"tool_use","id":"c1","name":"x","input":{}}]}`,
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"[cleared]"}]}`, user("q2")),
		}, "u:q1 a:a1  r:c1 u:q2"},
		{"pairs", []string{
			`{"request":` + req(user("q1")) + `,"response":` + resp("m1", "a1") + `}`,
			`{"request":` + req(user("q1"), asst("a1"), user("q2")) + `,"response":{"type":"error","error":{"type":"api_error","message":"boom"}}}`,
		}, "u:q1 a:a1 u:q2 notice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := shown(c.docs...); got != c.want {
				t.Errorf("shown\n  %s\nwant\n  %s", got, c.want)
			}
		})
	}
}

func TestConversationUserSplit(t *testing.T) {
	t.Parallel()
	c := NewConversation()
	evs := c.DecodeAt("", []byte(req(
		`{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"bash","input":{"command":"false"}}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"failed"}],"is_error":true},{"type":"text","text":"Try again."}]}`,
	)))
	checkEvents(t, evs)
	if len(evs) != 3 {
		t.Fatalf("events = %+v", evs)
	}
	r := evs[1]
	if r.Kind != events.KindPostToolCall || r.Tool.Name != "bash" || r.Tool.Call.ID != "c1" ||
		r.Tool.Result.Text != "failed" || !r.Tool.Result.IsError || r.Tool.Result.ExitCode != nil {
		t.Errorf("result = %+v %+v", r.Tool, r.Tool.Result)
	}
	if u := evs[2]; u.Kind != events.KindUserMessage || u.Text != "Try again." {
		t.Errorf("user = %+v", u)
	}
}

func TestSystemPrompt(t *testing.T) {
	t.Parallel()
	c := NewConversation()
	n := 0
	for _, sys := range []string{`"A"`, `[{"type":"text","text":"A"}]`, `"B"`, `null`, `""`, `"B"`} {
		for _, ev := range c.DecodeAt("", []byte(`{"system":`+sys+`,"messages":[]}`)) {
			if ev.Kind != events.KindNotice || ev.NoticeKind != events.NoticeSystem {
				t.Errorf("system %s gave %+v", sys, ev)
			}
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d system notices, want 2 (A, then B)", n)
	}
}

// TestConversationFarApart: what a log repeats long after (thousands of
// messages later) is still recognized: a response logged again is left
// out, and a request that departs from the conversation does not show
// again a message shown at its start.
func TestConversationFarApart(t *testing.T) {
	t.Parallel()
	docs := []string{req(user("first")), resp("m0", "a0")}
	want := []string{"u:first", "a:a0"}
	for i := 1; i <= 5000; i++ {
		docs = append(docs, resp(fmt.Sprintf("m%d", i), fmt.Sprintf("a%d", i)))
		want = append(want, fmt.Sprintf("a:a%d", i))
	}
	docs = append(docs, resp("m0", "a0"), req(user("first"), user("new")))
	want = append(want, "notice", "u:new")
	if got := shown(docs...); got != strings.Join(want, " ") {
		t.Errorf("shown ends with\n  %s\nwant\n  %s", tail(got), tail(strings.Join(want, " ")))
	}
}

func tail(s string) string { return s[max(0, len(s)-40):] }

// TestResultOfAnOldCall: a result is named after its call though
// thousands of other calls came between; a result for a call older than
// the calls kept is still shown, under its call's id, without the name.
func TestResultOfAnOldCall(t *testing.T) {
	t.Parallel()
	call := func(id, name string) string {
		return fmt.Sprintf(`{"id":"m-%s","type":"message","role":"assistant","content":[{"type":"tool_use","id":%q,"name":%q,"input":{}}]}`, id, id, name)
	}
	result := func(id string) string {
		return `{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"done"}]}`
	}
	c := NewConversation()
	calls := func(n int, prefix string) {
		for i := range n {
			c.DecodeAt("", []byte(call(prefix+strconv.Itoa(i), "read")))
		}
	}
	c.DecodeAt("", []byte(call("old", "bash")))
	calls(recent.Window-1, "a")
	c.DecodeAt("", []byte(call("recent", "grep")))
	calls(recent.Window-1, "b")
	for _, tc := range []struct{ id, name string }{{"recent", "grep"}, {"old", ""}} {
		evs := c.DecodeAt("", []byte(result(tc.id)))
		if len(evs) != 1 || evs[0].Kind != events.KindPostToolCall || evs[0].Tool.Call.ID != tc.id || evs[0].Tool.Name != tc.name {
			t.Errorf("result for %s = %+v, want a result named %q", tc.id, evs, tc.name)
		}
	}
}

// TestBlocksAsWhatTheyAre: a tool result of several parts keeps them
// apart; the server's own tools are the calls and results they are; a
// block of a type perch does not know is named in a notice, not folded
// into the reply's text.
func TestBlocksAsWhatTheyAre(t *testing.T) {
	t.Parallel()
	res := ParsePart(json.RawMessage(`{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"first part"},{"type":"text","text":"second part"}]}`))
	if len(res.Results) != 1 || res.Results[0].Text != "first part\nsecond part" {
		t.Errorf("multi-part result %+v", res.Results)
	}
	var c Conversation
	evs := c.Response("response 1", normalize.AsObject(json.RawMessage(`{"id":"m","role":"assistant","content":[
		{"type":"text","text":"Searching."},
		{"type":"server_tool_use","id":"s1","name":"web_search","input":{"query":"q"}},
		{"type":"web_search_tool_result","tool_use_id":"s1","content":[{"type":"web_search_result","title":"T","url":"https://e.org"}]},
		{"type":"hologram","data":"?"},
		{"type":"text","text":"Found it."}]}`)))
	var got []string
	for _, ev := range evs {
		switch ev.Kind {
		case events.KindAssistantMessage:
			var calls []string
			for _, tc := range ev.ToolCalls {
				calls = append(calls, tc.Name)
			}
			got = append(got, "turn "+ev.Text+" calls "+strings.Join(calls, ","))
		case events.KindPostToolCall:
			got = append(got, "result "+ev.Tool.Name+" "+ev.Tool.Result.Text)
		case events.KindNotice:
			got = append(got, "notice "+ev.Text)
		}
	}
	want := []string{
		"turn Searching.\nFound it. calls web_search",
		"result web_search T https://e.org",
		"notice The reply holds content perch does not know, not shown: hologram",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
