package pynchy

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/perch-tui/perch/events"
)

// TestFollowUpBetweenToolCallAndResult: a person's message that arrives
// while the agent is inside a tool (after its tool_use, before its
// tool_result) is piped into the run; it does not end the run, so the
// result still attaches to its call. The history keeps no activity, so the
// decoder must see the run from the rows alone.
func TestFollowUpBetweenToolCallAndResult(t *testing.T) {
	t.Parallel()
	const (
		hUser   = `{"sender_name": "You", "content": "list the files", "timestamp": "2026-01-01T00:00:01Z", "is_from_me": false}`
		hInit   = `{"sender_name": "system", "content": "{\"subtype\": \"init\"}", "timestamp": "2026-01-01T00:00:02Z", "is_from_me": true}`
		hThink  = `{"sender_name": "thinking", "content": "{\"thinking\": \"ls first\"}", "timestamp": "2026-01-01T00:00:03Z", "is_from_me": true}`
		hUse    = `{"sender_name": "tool_use", "content": "{\"tool_name\": \"Bash\", \"tool_input\": {\"command\": \"ls\"}}", "timestamp": "2026-01-01T00:00:04Z", "is_from_me": true}`
		hFollow = `{"sender_name": "You", "content": "also the tests", "timestamp": "2026-01-01T00:00:05Z", "is_from_me": false}`
		hAlice  = `{"sender_name": "alice", "content": "and me", "timestamp": "2026-01-01T00:00:05Z", "is_from_me": false}`
		hResult = `{"sender_name": "tool_result", "content": "{\"tool_use_id\": \"toolu_01\", \"content\": \"README.md\\n\", \"is_error\": false}", "timestamp": "2026-01-01T00:00:06Z", "is_from_me": true}`
		hThink2 = `{"sender_name": "thinking", "content": "{\"thinking\": \"enough\"}", "timestamp": "2026-01-01T00:00:07Z", "is_from_me": true}`
		hMeta   = `{"sender_name": "result_meta", "content": "{\"subtype\": \"success\", \"is_error\": false, \"usage\": {\"input_tokens\": 3, \"output_tokens\": 4}}", "timestamp": "2026-01-01T00:00:08Z", "is_from_me": true}`
		hReply  = `{"sender_name": "pynchy", "content": "Two files.", "timestamp": "2026-01-01T00:00:08Z", "is_from_me": true}`
		hNext   = `{"sender_name": "You", "content": "next", "timestamp": "2026-01-01T00:00:09Z", "is_from_me": false}`
		hUse2   = `{"sender_name": "tool_use", "content": "{\"tool_name\": \"Read\", \"tool_input\": {\"path\": \"a\"}}", "timestamp": "2026-01-01T00:00:10Z", "is_from_me": true}`
		hRes2   = `{"sender_name": "tool_result", "content": "{\"tool_use_id\": \"toolu_02\", \"content\": \"A\", \"is_error\": false}", "timestamp": "2026-01-01T00:00:11Z", "is_from_me": true}`
		hReply2 = `{"sender_name": "pynchy", "content": "Done.", "timestamp": "2026-01-01T00:00:09Z", "is_from_me": true}`
		hHost   = `{"sender_name": "host", "content": "⚠️ Agent error occurred", "timestamp": "2026-01-01T00:00:05Z", "is_from_me": true}`

		sOn     = `{"type": "agent_activity", "chat_jid": "c", "active": true}`
		sOff    = `{"type": "agent_activity", "chat_jid": "c", "active": false}`
		sUse    = `{"type": "agent_trace", "chat_jid": "c", "trace_type": "tool_use", "tool_name": "Bash", "tool_input": {"command": "ls"}}`
		sFollow = `{"type": "message", "chat_jid": "c", "sender_name": "You", "content": "also the tests", "timestamp": "2026-01-01T00:00:05Z", "is_bot": false}`
		sRead   = `{"type": "agent_trace", "chat_jid": "c", "trace_type": "user_input", "sender_name": "You", "content": "also the tests", "source": "user"}`
		sResult = `{"type": "agent_trace", "chat_jid": "c", "trace_type": "tool_result", "tool_use_id": "toolu_01", "content": "README.md\n", "is_error": false}`
		sReply  = `{"type": "message", "chat_jid": "c", "sender_name": "pynchy", "content": "Two files.", "timestamp": "2026-01-01T00:00:08Z", "is_bot": true}`
	)
	type tool struct{ id, status, result string }
	for _, tc := range []struct {
		name    string
		unit    string
		records []string
		items   []string // kind:text (tools: tool:id)
		tools   []tool
	}{
		{
			name:    "history, follow-up mid-tool",
			unit:    "message",
			records: []string{hUser, hInit, hThink, hUse, hFollow, hResult, hThink2, hMeta, hReply},
			items: []string{"user:list the files", "assistant:", "tool:tool-4", "user:also the tests",
				"assistant:Two files."},
			tools: []tool{{"tool-4", "ok", "README.md\n"}},
		},
		{
			name:    "history, a channel member mid-tool",
			unit:    "message",
			records: []string{hUser, hUse, hAlice, hResult, hReply},
			items:   []string{"user:list the files", "assistant:", "tool:tool-2", "user:and me", "assistant:Two files."},
			tools:   []tool{{"tool-2", "ok", "README.md\n"}},
		},
		{
			name:    "history, two follow-ups mid-tool",
			unit:    "message",
			records: []string{hUser, hUse, hFollow, hAlice, hResult, hReply},
			items: []string{"user:list the files", "assistant:", "tool:tool-2", "user:also the tests",
				"user:and me", "assistant:Two files."},
			tools: []tool{{"tool-2", "ok", "README.md\n"}},
		},
		{
			// The run that failed after its tool call left it without a
			// result: the next run's result is not paired with it.
			name:    "history, a failed run's call stays unpaired",
			unit:    "message",
			records: []string{hUser, hUse, hHost, hNext, hUse2, hRes2, hReply},
			items: []string{"user:list the files", "assistant:", "tool:tool-2", "notice:⚠️ Agent error occurred",
				"user:next", "assistant:", "tool:tool-5", "assistant:Two files."},
			tools: []tool{{"tool-2", "unknown", ""}, {"tool-5", "ok", "A"}},
		},
		{
			// A finished run's reply ends it: a call it left open is not
			// paired with the next run's result either.
			name:    "history, a replied run's call stays unpaired",
			unit:    "message",
			records: []string{hUser, hUse, hReply, hNext, hUse2, hRes2},
			items: []string{"user:list the files", "assistant:", "tool:tool-2", "assistant:Two files.",
				"user:next", "assistant:", "tool:tool-5"},
			tools: []tool{{"tool-2", "unknown", ""}, {"tool-5", "ok", "A"}},
		},
		{
			// The agent wrote to the chat from inside its tool (pynchy's
			// send_message): the run goes on, and the result finds its call.
			name:    "history, the agent speaks mid-tool",
			unit:    "message",
			records: []string{hUser, hUse, hReply, hResult, hThink2, hMeta, hReply2},
			items: []string{"user:list the files", "assistant:", "tool:tool-2", "assistant:Two files.",
				"assistant:Done."},
			tools: []tool{{"tool-2", "ok", "README.md\n"}},
		},
		{
			// A run that stopped with no row to say so (no result_meta,
			// reply or host message): the next query's init ends its
			// waiting call.
			name:    "history, a run cut short, then the next query",
			unit:    "message",
			records: []string{hUser, hUse, hNext, hInit, hUse2, hRes2},
			items: []string{"user:list the files", "assistant:", "tool:tool-2", "user:next",
				"assistant:", "tool:tool-5"},
			tools: []tool{{"tool-2", "unknown", ""}, {"tool-5", "ok", "A"}},
		},
		{
			name:    "stream, follow-up mid-tool",
			unit:    "frame",
			records: []string{sOn, sUse, sFollow, sRead, sResult, sReply, sOff},
			items:   []string{"assistant:", "tool:tool-2", "user:also the tests", "assistant:Two files."},
			tools:   []tool{{"tool-2", "ok", "README.md\n"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := timeline(decodeAll(NewDecoder("", tc.unit), tc.records...))
			var items []string
			var tools []tool
			for _, it := range tl.Items() {
				switch it.Kind {
				case events.ItemTool:
					items = append(items, "tool:"+it.ID)
					res := ""
					if it.Tool.Result != nil {
						res = it.Tool.Result.Text
					}
					tools = append(tools, tool{it.ID, it.Tool.Status.String(), res})
				default:
					items = append(items, it.Kind.String()+":"+it.Text)
				}
			}
			if !reflect.DeepEqual(items, tc.items) {
				t.Errorf("items\n %q\nwant\n %q", items, tc.items)
			}
			if !reflect.DeepEqual(tools, tc.tools) {
				t.Errorf("tools\n %+v\nwant\n %+v", tools, tc.tools)
			}
		})
	}
}

// TestRunWithoutReplyEndsAtResultMeta: a run that ends with its
// result_meta and no reply is over: the next person's message starts the
// next exchange, the run's usage goes to its own turn, and its call is not
// paired with the next run's result.
func TestRunWithoutReplyEndsAtResultMeta(t *testing.T) {
	t.Parallel()
	tl := timeline(decodeAll(NewDecoder("", "message"),
		`{"sender_name": "You", "content": "list the files", "timestamp": "2026-01-01T00:00:01Z", "is_from_me": false}`,
		`{"sender_name": "tool_use", "content": "{\"tool_name\": \"Bash\", \"tool_input\": {\"command\": \"ls\"}}", "timestamp": "2026-01-01T00:00:02Z", "is_from_me": true}`,
		`{"sender_name": "result_meta", "content": "{\"subtype\": \"success\", \"is_error\": false, \"usage\": {\"input_tokens\": 3, \"output_tokens\": 4}}", "timestamp": "2026-01-01T00:00:03Z", "is_from_me": true}`,
		`{"sender_name": "You", "content": "next", "timestamp": "2026-01-01T00:00:04Z", "is_from_me": false}`,
		`{"sender_name": "tool_use", "content": "{\"tool_name\": \"Read\", \"tool_input\": {\"path\": \"a\"}}", "timestamp": "2026-01-01T00:00:05Z", "is_from_me": true}`,
		`{"sender_name": "tool_result", "content": "{\"tool_use_id\": \"toolu_02\", \"content\": \"A\", \"is_error\": false}", "timestamp": "2026-01-01T00:00:06Z", "is_from_me": true}`,
		`{"sender_name": "pynchy", "content": "Read it.", "timestamp": "2026-01-01T00:00:07Z", "is_from_me": true}`,
	))
	var got []string
	for _, it := range tl.Items() {
		s := it.Kind.String() + ":" + it.ID
		if it.Usage != nil {
			s += fmt.Sprintf(":usage %d/%d", it.Usage.InputTokens, it.Usage.OutputTokens)
		}
		if it.Tool != nil {
			s += ":" + it.Tool.Status.String()
		}
		got = append(got, s)
	}
	want := []string{"user:user-1", "assistant:turn-2:usage 3/4", "tool:tool-2:unknown", "user:user-4",
		"assistant:turn-5", "tool:tool-5:ok", "assistant:turn-7"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items\n %q\nwant\n %q", got, want)
	}
}
