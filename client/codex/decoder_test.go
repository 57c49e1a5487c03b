package codex

import (
	"strconv"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

func decodeLines(lines ...string) []events.Event {
	d := NewDecoder()
	var out []events.Event
	for i, l := range lines {
		out = append(out, d.Decode("line "+strconv.Itoa(i+1), []byte(l))...)
	}
	return append(out, d.Flush()...)
}

// timeline applies events as perch import does.
func timeline(evs []events.Event) *events.Timeline {
	tl := events.NewTimeline()
	for _, ev := range evs {
		tl.Apply(ev)
	}
	tl.EndOfInput()
	return tl
}

func TestUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in                            string
		input, cached, output, reason int64
		hasReason                     bool
	}{
		{`{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}`, 24763, 24448, 122, 0, false},
		{`{"input_tokens":100,"cached_input_tokens":40,"output_tokens":9,"reasoning_output_tokens":5}`, 100, 40, 9, 5, true},
		{`{"input_tokens":100,"output_tokens":9}`, 100, 0, 9, 0, false},
	}
	for _, c := range cases {
		u := usage([]byte(c.in))
		if u == nil || u.InputTokens != c.input || u.CachedTokens != c.cached || u.OutputTokens != c.output ||
			u.ReasoningTokens != c.reason || u.HasReasoning != c.hasReason {
			t.Errorf("%s: %+v", c.in, u)
		}
	}
	if usage([]byte(`null`)) != nil {
		t.Error("null usage is not nil")
	}
}

func TestItemsMakeTurns(t *testing.T) {
	t.Parallel()
	tl := timeline(decodeLines(
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"r0","type":"reasoning","text":"think"}}`,
		`{"type":"item.started","item":{"id":"m1","type":"agent_message","text":"Work"}}`,
		`{"type":"item.completed","item":{"id":"m1","type":"agent_message","text":"Working."}}`,
		`{"type":"item.started","item":{"id":"c2","type":"command_execution","command":"ls","aggregated_output":"","status":"in_progress"}}`,
		`{"type":"item.updated","item":{"id":"c2","type":"command_execution","command":"ls","aggregated_output":"a\n","status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"c2","type":"command_execution","command":"ls","aggregated_output":"a\nb\n","exit_code":0,"status":"completed"}}`,
		`{"type":"item.completed","item":{"id":"r3","type":"reasoning","text":"more"}}`,
		`{"type":"item.completed","item":{"id":"m4","type":"agent_message","text":"Done."}}`,
		`{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":2}}`,
	))
	var got []string
	for _, it := range tl.Items() {
		switch it.Kind {
		case events.ItemAssistant:
			u := ""
			if it.Usage != nil {
				u = " usage"
			}
			got = append(got, "assistant "+it.ID+" ["+it.Thinking+"] "+it.Text+u)
		case events.ItemTool:
			got = append(got, "tool "+it.ID+" "+it.Tool.Status.String()+" "+strings.TrimSpace(it.Tool.Result.Text))
		default:
			got = append(got, it.Kind.String()+" "+it.Text)
		}
	}
	want := []string{
		"assistant r0 [think] Working.",
		"tool c2 ok a\nb",
		"assistant r3 [more] Done. usage",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("items\n%q\nwant\n%q", got, want)
	}
}

func TestTurnWithoutMessageCarriesUsage(t *testing.T) {
	t.Parallel()
	tl := timeline(decodeLines(`{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":7,"cached_input_tokens":0,"output_tokens":1}}`))
	items := tl.Items()
	if len(items) != 1 || items[0].ID != "turn-1" || items[0].Usage == nil || items[0].Usage.InputTokens != 7 {
		t.Fatalf("items %+v", items)
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, content string
		want          int
	}{
		{"current", "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"turn.started\"}\n", 95},
		{"one line", `{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"hi"}}`, 95},
		{"legacy", "{\"model\":\"o3\",\"sandbox\":\"read-only\"}\n{\"prompt\":\"hi\"}\n{\"id\":\"0\",\"msg\":{\"type\":\"task_started\"}}\n", 90},
		{"maria docs dialect", "{\"id\":1,\"msg\":\"MessageAdded\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n{\"id\":2,\"msg\":\"PostConversation\"}\n", 0},
		{"maria head", "{\"id\":\"1\",\"desc\":{\"msg\":\"PreConversation\"}}\n{\"id\":\"2\",\"desc\":{\"msg\":\"PostConversation\"}}\n", 0},
		{"anthropic events", "{\"type\":\"message_start\",\"message\":{}}\n{\"type\":\"message_stop\"}\n", 0},
		{"openai chunks", "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n{\"choices\":[]}\n", 0},
		{"claude code", "{\"type\":\"system\",\"subtype\":\"init\"}\n{\"type\":\"result\",\"subtype\":\"success\"}\n", 0},
	}
	for _, c := range cases {
		if got := detect(ingest.SniffBytes("x", []byte(c.content), true)); got != c.want {
			t.Errorf("%s: detect = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestMultiMBOutput: a command output of several MB comes out whole.
func TestMultiMBOutput(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("line of build output\n", 6<<20/21)
	d := NewDecoder()
	line := `{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"make","aggregated_output":"` +
		strings.ReplaceAll(big, "\n", `\n`) + `","exit_code":0,"status":"completed"}}`
	var got string
	for _, ev := range d.Decode("line 1", []byte(line)) {
		if ev.Kind == events.KindPostToolCall {
			got = ev.Tool.Result.Text
		}
	}
	if got != big {
		t.Fatalf("output of %d bytes, want %d", len(got), len(big))
	}
}

// BenchmarkManyTools: a turn of many commands decodes in linear time.
func BenchmarkManyTools(b *testing.B) {
	lines := []string{`{"type":"turn.started"}`}
	for i := 0; i < 5000; i++ {
		lines = append(lines, `{"type":"item.completed","item":{"id":"c`+strconv.Itoa(i)+
			`","type":"command_execution","command":"ls","aggregated_output":"x","exit_code":0,"status":"completed"}}`)
	}
	for b.Loop() {
		timeline(decodeLines(lines...))
	}
}

// TestRolloutClasses: each class of rollout line, in its smallest input.
func TestRolloutClasses(t *testing.T) {
	t.Parallel()
	const (
		meta    = `{"type":"session_meta","payload":{"id":"th","cwd":"/w"}}`
		start   = `{"type":"event_msg","payload":{"type":"task_started"}}`
		end     = `{"type":"event_msg","payload":{"type":"task_complete"}}`
		call    = `{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"rm -rf x\"}","call_id":"c1"}}`
		prompt  = `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"do it"}]}}`
		env     = `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n<cwd>/w</cwd>\n</environment_context>"}]}}`
		devMsg  = `{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>"}]}}`
		plan    = `{"type":"response_item","payload":{"type":"function_call","name":"update_plan","arguments":"{\"plan\":[{\"step\":\"a\",\"status\":\"pending\"}]}","call_id":"p1"}}`
		planOut = `{"type":"response_item","payload":{"type":"function_call_output","call_id":"p1","output":"unsupported call: update_plan"}}`
	)
	type item struct{ kind, text string }
	for _, tc := range []struct {
		name  string
		lines []string
		want  []item
		todos int
	}{
		{"the user's prompt and what Codex added", []string{meta, devMsg, env, prompt},
			[]item{{"notice", "Codex added to the prompt: <permissions instructions>"}, {"notice", "Codex added to the prompt: <environment_context>"}, {"user", "do it"}}, 0},
		{"a command the user declined", []string{meta, start, call,
			`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"c1","status":"declined"}}}`,
			`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"rejected by user"}}`, end},
			[]item{{"assistant", ""}, {"tool error", "rejected by user"}}, 0},
		{"a multi-part result keeps its parts apart", []string{meta, start, call,
			`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"one"},{"type":"input_image","image_url":"data:image/png;base64,AA=="},{"type":"input_text","text":"two"}]}}`, end},
			[]item{{"assistant", ""}, {"tool ok", "one\n\n[image]\n\ntwo"}}, 0},
		{"a plan Codex refused changes no list", []string{meta, start, plan, planOut, end},
			[]item{{"assistant", ""}, {"tool ok", "unsupported call: update_plan"}}, 0},
		{"a plan Codex took", []string{meta, start, plan,
			`{"type":"event_msg","payload":{"type":"plan_update","plan":[{"step":"a","status":"pending"}]}}`, end},
			[]item{{"assistant", ""}, {"tool unknown", ""}}, 1},
		{"unknown kinds: one notice", []string{meta, `{"type":"hologram","payload":{}}`, `{"type":"event_msg","payload":{"type":"new_thing"}}`,
			`{"type":"hologram","payload":{}}`, `{"type":"turn_context","payload":{}}`},
			[]item{{"notice", "Codex wrote lines of kinds perch does not know, left out: hologram, event_msg new_thing"}}, 0},
		{"a result for a call the file lacks", []string{meta, `{"type":"response_item","payload":{"type":"function_call_output","call_id":"zz","output":"x"}}`},
			[]item{{"notice", "A tool result for a call the file does not have (zz): \"x\""}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tl := timeline(decodeLines(tc.lines...))
			var got []item
			for _, it := range tl.Items() {
				switch it.Kind {
				case events.ItemUser:
					got = append(got, item{"user", it.Text})
				case events.ItemAssistant:
					got = append(got, item{"assistant", it.Text})
				case events.ItemNotice:
					got = append(got, item{"notice", it.Text})
				case events.ItemTool:
					text := ""
					if it.Tool.Result != nil {
						text = it.Tool.Result.Text
					}
					got = append(got, item{"tool " + it.Tool.Status.String(), text})
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("items %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] && !(tc.want[i].kind == got[i].kind && strings.HasPrefix(got[i].text, tc.want[i].text)) {
					t.Errorf("item %d: %q, want %q", i, got[i], tc.want[i])
				}
			}
			if len(tl.Todos()) != tc.todos {
				t.Errorf("%d todos, want %d", len(tl.Todos()), tc.todos)
			}
		})
	}
}

// TestRolloutModelAndTime: a rollout's turn_context names the model (said
// once, and again when it changes) and its lines their time.
func TestRolloutModelAndTime(t *testing.T) {
	d := NewDecoder()
	var evs []events.Event
	for _, l := range []string{
		`{"timestamp":"2026-12-07T02:00:00.000Z","type":"session_meta","payload":{"id":"th-1","cwd":"/w"}}`,
		`{"timestamp":"2026-12-07T02:00:01.000Z","type":"turn_context","payload":{"model":"gpt-5-codex","cwd":"/w"}}`,
		`{"timestamp":"2026-12-07T02:00:02.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}}`,
		`{"timestamp":"2026-12-07T02:00:03.000Z","type":"turn_context","payload":{"model":"gpt-5-codex","cwd":"/w"}}`,
		`{"timestamp":"2026-12-07T02:00:04.000Z","type":"turn_context","payload":{"model":"gpt-5.5","cwd":"/w"}}`,
	} {
		evs = append(evs, d.Decode("", []byte(l))...)
	}
	var models []string
	for _, e := range evs {
		if e.Kind == events.KindModelLoaded {
			models = append(models, e.Model)
		}
		if e.Created.IsZero() {
			t.Errorf("%v event without its line's time", e.Kind)
		}
	}
	if strings.Join(models, ",") != "gpt-5-codex,gpt-5.5" {
		t.Errorf("models %v", models)
	}
}
