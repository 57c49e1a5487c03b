package pynchy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

func TestSplitBrain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, text string
		thoughts []string
	}{
		{"🧠 _plan_\nDone", "Done", []string{"plan"}},
		{"🧠 _a_\n🧠 _b_\nDone", "Done", []string{"a", "b"}},
		{"Done\n🧠 _at the end_", "Done", []string{"at the end"}},
		{"Hello 🧠 _mid line_\n world", "Hello  world", []string{"mid line"}},
		{"🧠 _multi\nline thought_\nok", "ok", []string{"multi\nline thought"}},
		{"🧠 _snake_case is fine_\nok", "ok", []string{"snake_case is fine"}},
		// Not the host's form: stays text, untouched.
		{"🧠 _ padded _\nok", "🧠 _ padded _\nok", nil},
		{"🧠 _never closed", "🧠 _never closed", nil},
		{"🧠 __\nempty", "🧠 __\nempty", nil},
		{"I like 🧠 emoji", "I like 🧠 emoji", nil},
		{"🧠 _", "🧠 _", nil},
		{"🧠 _x", "🧠 _x", nil},
	} {
		text, thoughts := splitBrain(tc.in)
		if text != tc.text || !reflect.DeepEqual(thoughts, tc.thoughts) {
			t.Errorf("splitBrain(%q) = %q, %q; want %q, %q", tc.in, text, thoughts, tc.text, tc.thoughts)
		}
	}
}

func TestSplitInternal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, text string
		thoughts []string
	}{
		{"<internal>plan</internal>Done", "Done", []string{"plan"}},
		{"A <internal> x </internal> B <internal>y</internal>", "A  B", []string{"x", "y"}},
		{"Done <internal>cut off", "Done", []string{"cut off"}},
		{"<internal></internal>Only text", "Only text", nil},
		{"no tags at all  ", "no tags at all  ", nil},
	} {
		text, thoughts := splitInternal(tc.in)
		if text != tc.text || !reflect.DeepEqual(thoughts, tc.thoughts) {
			t.Errorf("splitInternal(%q) = %q, %q; want %q, %q", tc.in, text, thoughts, tc.text, tc.thoughts)
		}
	}
}

func TestCommandOutput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, out string
		exit    int // -1: none
		failed  bool
	}{
		{"✅ Command output (exit 0):\n```\nok\n```", "ok", 0, false},
		{"❌ Command output (exit 2):\n```\nerr\nmore\n```", "err\nmore", 2, true},
		{"❌ Command output (exit -9):\n```\nkilled\n```", "killed", -9, true},
		{"✅ Command output (exit 0):\nunfenced", "unfenced", 0, false},
		{"❌ Command output (exit 99999999999999999999):\n```\nx\n```", "x", -1, true},
		{"some older format", "some older format", -1, false},
		{"❌ failed somehow", "❌ failed somehow", -1, true},
	} {
		out, exit, failed := commandOutput(tc.in)
		got := -1
		if exit != nil {
			got = *exit
		}
		if out != tc.out || got != tc.exit || failed != tc.failed {
			t.Errorf("commandOutput(%q) = %q, %d, %v; want %q, %d, %v", tc.in, out, got, failed, tc.out, tc.exit, tc.failed)
		}
	}
}

func TestStripSpeakerAndHost(t *testing.T) {
	t.Parallel()
	if got := stripSpeaker("pynchy: pynchy: hi", "pynchy"); got != "pynchy: hi" {
		t.Errorf("strip once: %q", got)
	}
	if got := stripSpeaker("pynchyX: hi", "pynchy"); got != "pynchyX: hi" {
		t.Errorf("other prefix: %q", got)
	}
	if got, ok := hostMessage("  <host>\n Restarting \n</host>\n"); !ok || got != "Restarting" {
		t.Errorf("host: %q %v", got, ok)
	}
	if _, ok := hostMessage("Note: <host>x</host> inside"); ok {
		t.Error("a host tag inside text is not a host message")
	}
}

func TestResultText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`"plain"`: "plain",
		`"[{\"type\": \"text\", \"text\": \"ok\"}]"`: "ok",
		`"[1, 2]"`:                           "[1, 2]",
		`"[{\"a\": 1}]"`:                     `[{"a": 1}]`,
		`"[not json]"`:                       "[not json]",
		`[{"type": "text", "text": "list"}]`: "list",
		`null`:                               "",
	} {
		if got := resultText(json.RawMessage(in)); got != want {
			t.Errorf("resultText(%s) = %q, want %q", in, got, want)
		}
	}
}

// decodeAll feeds records to a decoder and returns every event.
func decodeAll(d *Decoder, records ...string) []events.Event {
	var out []events.Event
	for _, r := range records {
		out = append(out, d.Decode([]byte(r))...)
	}
	return append(out, d.Flush()...)
}

func timeline(evs []events.Event) *events.Timeline {
	tl := events.NewTimeline()
	for _, ev := range evs {
		tl.Apply(ev)
	}
	tl.EndOfInput()
	return tl
}

func TestChatFilter(t *testing.T) {
	t.Parallel()
	d := NewDecoder("a", "frame")
	evs := decodeAll(d,
		`{"type": "message", "chat_jid": "b", "sender_name": "You", "content": "not mine", "is_bot": false}`,
		`{"type": "message", "chat_jid": "a", "sender_name": "You", "content": "mine", "is_bot": false}`,
		`{"type": "message", "sender_name": "You", "content": "no jid", "is_bot": false}`,
	)
	var texts []string
	for _, ev := range evs {
		texts = append(texts, ev.Text)
	}
	if !reflect.DeepEqual(texts, []string{"mine", "no jid"}) {
		t.Errorf("kept %q", texts)
	}
}

// TestTruncatedRunIsIncomplete: a run cut while active leaves its open
// turn incomplete.
func TestTruncatedRunIsIncomplete(t *testing.T) {
	t.Parallel()
	tl := timeline(decodeAll(NewDecoder("", "frame"),
		`{"type": "agent_activity", "chat_jid": "c", "active": true}`,
		`{"type": "agent_trace", "chat_jid": "c", "trace_type": "text", "text": "half a"}`,
	))
	items := tl.Items()
	if len(items) != 1 || !items[0].Incomplete || items[0].Text != "half a" {
		t.Fatalf("items %+v", items)
	}
	// Outside a run, nothing is known to be cut.
	tl = timeline(decodeAll(NewDecoder("", "message"),
		`{"sender_name": "thinking", "content": "{\"thinking\": \"hm\"}", "is_from_me": true}`,
	))
	if items := tl.Items(); len(items) != 1 || items[0].Incomplete {
		t.Fatalf("history items %+v", items)
	}
}

// TestFollowUpThenReply: a follow-up closes the turn whose text the final
// message then repeats; the reply completes that turn, not a second one.
func TestFollowUpThenReply(t *testing.T) {
	t.Parallel()
	tl := timeline(decodeAll(NewDecoder("", "frame"),
		`{"type": "agent_activity", "chat_jid": "c", "active": true}`,
		`{"type": "agent_trace", "chat_jid": "c", "trace_type": "text", "text": "<internal>t</internal>All done."}`,
		`{"type": "message", "chat_jid": "c", "sender_name": "bob", "content": "thanks", "is_bot": false}`,
		`{"type": "agent_trace", "chat_jid": "c", "trace_type": "result_meta", "subtype": "success", "usage": {"input_tokens": 1, "output_tokens": 2}}`,
		`{"type": "message", "chat_jid": "c", "sender_name": "pynchy", "content": "🧠 _t_\nAll done.", "is_bot": true}`,
		`{"type": "agent_activity", "chat_jid": "c", "active": false}`,
	))
	var kinds []string
	for _, it := range tl.Items() {
		kinds = append(kinds, it.Kind.String()+":"+it.Text)
	}
	want := []string{"assistant:All done.", "user:thanks"}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("items %q, want %q", kinds, want)
	}
	a := tl.Items()[0]
	if a.Thinking != "t" || a.Usage == nil || a.StopReason != events.StopEndTurn {
		t.Errorf("turn %+v", a)
	}
}

// TestUserInputEcho: the run's user_input repeats messages already shown;
// one the recording missed becomes a user turn.
func TestUserInputEcho(t *testing.T) {
	t.Parallel()
	tl := timeline(decodeAll(NewDecoder("", "frame"),
		`{"type": "message", "chat_jid": "c", "sender_name": "You", "content": "hi", "is_bot": false}`,
		`{"type": "agent_activity", "chat_jid": "c", "active": true}`,
		`{"type": "agent_trace", "chat_jid": "c", "trace_type": "user_input", "sender_name": "You", "content": "earlier", "source": "user"}`,
		`{"type": "agent_trace", "chat_jid": "c", "trace_type": "user_input", "sender_name": "You", "content": "hi", "source": "user"}`,
		`{"type": "agent_trace", "chat_jid": "c", "trace_type": "user_input", "sender_name": "System", "content": "[System Notice] x", "source": "user"}`,
	))
	var got []string
	for _, it := range tl.Items() {
		got = append(got, it.Kind.String()+":"+it.Text)
	}
	want := []string{"user:hi", "user:earlier", "notice:x"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("items %q, want %q", got, want)
	}
}

// TestRunWithoutReply: usage with nothing to attach to is a notice.
func TestRunWithoutReply(t *testing.T) {
	t.Parallel()
	tl := timeline(decodeAll(NewDecoder("", "frame"),
		`{"type": "agent_activity", "chat_jid": "c", "active": true}`,
		`{"type": "agent_trace", "chat_jid": "c", "trace_type": "result_meta", "subtype": "error_during_execution", "is_error": true, "total_cost_usd": 0.5, "usage": {"input_tokens": 10, "output_tokens": 2}}`,
		`{"type": "agent_activity", "chat_jid": "c", "active": false}`,
	))
	items := tl.Items()
	if len(items) != 1 || items[0].Kind != events.ItemNotice || items[0].Level != events.LevelWarning ||
		!strings.Contains(items[0].Text, "error_during_execution") || !strings.Contains(items[0].Text, "$0.5000") {
		t.Fatalf("items %+v", items)
	}
}

// TestBigOutput: a multi-megabyte tool output comes through whole.
func TestBigOutput(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef\n", 300_000) // ~5 MB
	content, _ := json.Marshal(big)
	var b strings.Builder
	b.WriteString(`data: {"type": "agent_trace", "chat_jid": "c", "trace_type": "tool_use", "tool_name": "Bash", "tool_input": {"command": "cat big"}}` + "\n\n")
	b.WriteString(`data: {"type": "agent_trace", "chat_jid": "c", "trace_type": "tool_result", "tool_use_id": "", "content": ` + string(content) + `, "is_error": false}` + "\n\n")
	path := filepath.Join(t.TempDir(), "big.sse")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ingest.Sniff(path)
	if err != nil {
		t.Fatal(err)
	}
	if detect(s) == 0 {
		t.Fatal("not detected")
	}
	tl := events.NewTimeline()
	if err := importFile(context.Background(), s, ingest.Options{}, func(ev events.Event) { tl.Apply(ev) }); err != nil {
		t.Fatal(err)
	}
	for _, it := range tl.Items() {
		if it.Kind == events.ItemTool {
			if it.Tool.Result == nil || it.Tool.Result.Text != big {
				t.Fatal("output not byte-exact")
			}
			return
		}
	}
	t.Fatal("no tool item")
}

// TestDetectLeavesOthersAlone: shapes of other systems score 0.
func TestDetectLeavesOthersAlone(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`[{"role": "user", "content": "hi"}]`,
		`{"messages": [{"role": "assistant", "content": "x"}]}`,
		`[{"thread_id": "t", "type": "assistant", "content": "{}"}]`,
		`[{"id": 1, "msg": "MessageAdded", "message": {}}]`,
		"data: {\"type\": \"status\", \"status\": \"running\"}\n\n",
		"data: {\"type\": \"message_start\", \"message\": {}}\n\n",
		`[{"sender_name": "x", "content": "y"}]`,
	} {
		if n := detect(ingest.SniffBytes("x", []byte(doc), true)); n != 0 {
			t.Errorf("detect(%s) = %d", doc, n)
		}
	}
	for doc, want := range map[string]int{
		`[{"sender_name": "You", "content": "hi", "timestamp": "t", "is_from_me": false}]`: 85,
		"data: {\"type\": \"agent_activity\", \"chat_jid\": \"c\", \"active\": true}\n\n":  90,
	} {
		if n := detect(ingest.SniffBytes("x", []byte(doc), true)); n != want {
			t.Errorf("detect(%s) = %d, want %d", doc, n, want)
		}
	}
}
