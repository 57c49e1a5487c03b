package anthropic

import (
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
)

// feed decodes one event per line.
func feed(d *Decoder, lines string) []events.Event {
	var out []events.Event
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		out = append(out, d.Decode([]byte(l))...)
	}
	return append(out, d.Flush()...)
}

func turns(evs []events.Event) []events.Event {
	var out []events.Event
	for _, ev := range evs {
		if ev.Kind == events.KindAssistantMessage {
			out = append(out, ev)
		}
	}
	return out
}

func TestStreamTurns(t *testing.T) {
	t.Parallel()
	const start = `{"type":"message_start","message":{"id":"m1","usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":1}}}`
	cases := []struct {
		name       string
		lines      string
		text       string
		thinking   string
		stop       string
		incomplete bool
		args       string // ArgsRaw of the first call
		argsErr    bool
		out        int64 // output tokens
		in         int64 // input tokens
	}{
		{
			name: "whole message",
			lines: start + `
{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}
{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}
{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}
{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}
{"type":"message_stop"}`,
			text: "Hello", stop: events.StopEndTurn, out: 5, in: 100,
		},
		{
			name: "usage is the max of cumulative counts, never a sum",
			lines: start + `
{"type":"message_delta","delta":{},"usage":{"output_tokens":7}}
{"type":"message_delta","delta":{},"usage":{"output_tokens":9,"input_tokens":10,"cache_read_input_tokens":90}}
{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":8}}
{"type":"message_stop"}`,
			stop: events.StopMaxTokens, out: 9, in: 100,
		},
		{
			name: "thinking and signature",
			lines: start + `
{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}
{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}
{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG"}}
{"type":"message_stop"}`,
			thinking: "hmm", out: 1, in: 100,
		},
		{
			name: "cut inside the tool arguments",
			lines: start + `
{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"bash","input":{}}}
{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\": \"l"}}`,
			incomplete: true, args: `{"command": "l`, argsErr: true, out: 1, in: 100,
		},
		{
			name: "cut after whole arguments",
			lines: start + `
{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"bash","input":{}}}
{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\": \"ls\"}"}}`,
			incomplete: true, args: `{"command": "ls"}`, out: 1, in: 100,
		},
		{
			name: "an error ends the message",
			lines: start + `
{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Part"}}
{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			text: "Part", stop: events.StopError, incomplete: true, out: 1, in: 100,
		},
		{
			name: "deltas without their starts",
			lines: start + `
{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}
{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}
{"type":"message_stop"}`,
			text: "a", args: "{}", out: 1, in: 100,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			evs := feed(NewDecoder(), c.lines)
			checkEvents(t, evs)
			tt := turns(evs)
			if len(tt) != 1 {
				t.Fatalf("got %d turns, want 1: %+v", len(tt), evs)
			}
			ev := tt[0]
			if ev.ID != "m1" || ev.Text != c.text || ev.Thinking != c.thinking || ev.StopReason != c.stop || ev.Incomplete != c.incomplete {
				t.Errorf("turn = id %q text %q thinking %q stop %q incomplete %v", ev.ID, ev.Text, ev.Thinking, ev.StopReason, ev.Incomplete)
			}
			if c.args != "" {
				if len(ev.ToolCalls) == 0 {
					t.Fatalf("no tool call")
				}
				tc := ev.ToolCalls[len(ev.ToolCalls)-1]
				if tc.ArgsRaw != c.args || (tc.ArgsErr != "") != c.argsErr || (len(tc.Args) == 0) != c.argsErr {
					t.Errorf("call = %+v, want raw %q, error %v", tc, c.args, c.argsErr)
				}
			}
			switch {
			case c.incomplete:
				// Cut off before message_delta: the output count is
				// message_start's placeholder, so the usage is unknown.
				if ev.Usage != nil {
					t.Errorf("usage of a cut reply = %+v, want unknown", ev.Usage)
				}
			case ev.Usage == nil || ev.Usage.OutputTokens != c.out || ev.Usage.InputTokens != c.in:
				t.Errorf("usage = %+v, want in %d out %d", ev.Usage, c.in, c.out)
			}
		})
	}
}

func TestStreamDeltasThenFinal(t *testing.T) {
	t.Parallel()
	d := &Decoder{Deltas: true}
	evs := feed(d, `{"type":"message_start","message":{"id":"m1"}}
{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}
{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"x"}}
{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}
{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"a"}}
{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"b"}}
{"type":"message_stop"}`)
	var kinds []events.Kind
	for _, ev := range evs {
		if ev.ID != "m1" {
			t.Errorf("event %v has id %q", ev.Kind, ev.ID)
		}
		kinds = append(kinds, ev.Kind)
	}
	want := []events.Kind{events.KindThinkingDelta, events.KindTextDelta, events.KindTextDelta, events.KindAssistantMessage}
	if len(kinds) != len(want) {
		t.Fatalf("kinds = %v, want %v", kinds, want)
	}
	tl := events.NewTimeline()
	for _, ev := range evs {
		tl.Apply(ev)
	}
	if tl.Len() != 1 || tl.Items()[0].Text != "ab" || tl.Items()[0].Thinking != "x" || tl.Items()[0].Open {
		t.Errorf("timeline = %+v", tl.Items()[0])
	}
}

func TestStreamSeveralMessages(t *testing.T) {
	t.Parallel()
	evs := feed(NewDecoder(), `{"type":"message_start","message":{"id":"m1"}}
{"type":"message_start","message":{"id":"m2"}}
{"type":"message_stop"}
{"type":"message_stop"}
{"type":"message_start","message":{"id":"m1"}}
{"type":"message_stop"}
{"type":"message_start","message":{}}
{"type":"message_stop"}
{"type":"ping"}
{"type":"mystery"}
{"type":"mystery"}
not json`)
	tt := turns(evs)
	var ids []string
	for _, ev := range tt {
		ids = append(ids, ev.ID)
	}
	if got := strings.Join(ids, " "); got != "m1 m2 m1#2 msg-4" {
		t.Errorf("ids = %s", got)
	}
	if !tt[0].Incomplete || tt[1].Incomplete {
		t.Errorf("incomplete = %v %v, want true false", tt[0].Incomplete, tt[1].Incomplete)
	}
	var notices []string
	for _, ev := range evs {
		if ev.Kind == events.KindNotice {
			notices = append(notices, ev.Text)
		}
	}
	if len(notices) != 2 || !strings.Contains(notices[0], `"mystery"`) || !strings.Contains(notices[1], "not JSON") {
		t.Errorf("notices = %q", notices)
	}
}

func TestUsageMax(t *testing.T) {
	t.Parallel()
	var u UsageMax
	if u.Usage() != nil {
		t.Fatal("empty usage is not nil")
	}
	u.Merge([]byte(`{"input_tokens":5,"cache_creation_input_tokens":10,"output_tokens":1,"service_tier":"standard"}`))
	u.Merge([]byte(`{"output_tokens":40,"input_tokens":null}`))
	u.Merge([]byte(`{"output_tokens":"30"}`))
	u.Merge([]byte(`[1]`))
	got := u.Usage()
	if got.InputTokens != 15 || got.OutputTokens != 40 || !got.HasCacheWrite || got.CacheWriteTokens != 10 {
		t.Errorf("usage = %+v", got)
	}
}
