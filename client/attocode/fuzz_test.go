package attocode

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
)

// fixtureLines are the lines of the JSON-lines fixtures, as fuzz seeds.
func fixtureLines(f *testing.F) [][]byte {
	files, _ := filepath.Glob(filepath.Join("testdata", "fixtures", "*.jsonl"))
	var out [][]byte
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
		out = append(out, bytes.Split(b, []byte("\n"))...)
	}
	return out
}

// checkEvents: every string an event carries is valid UTF-8, and the
// timeline takes them.
func checkEvents(t *testing.T, evs []events.Event) {
	t.Helper()
	tl := events.NewTimeline()
	for _, ev := range evs {
		strs := []string{ev.ID, ev.Text, ev.Thinking}
		for _, c := range ev.ToolCalls {
			strs = append(strs, c.ID, c.Name, c.ArgsRaw)
		}
		if ev.Tool != nil {
			strs = append(strs, ev.Tool.Call.ID, ev.Tool.Name)
			if ev.Tool.Result != nil {
				strs = append(strs, ev.Tool.Result.Text, ev.Tool.Result.ErrorText)
			}
		}
		for _, s := range strs {
			if !utf8.ValidString(s) {
				t.Fatalf("%s event carries invalid UTF-8: %q", ev.Kind, s)
			}
		}
		tl.Apply(ev)
	}
	tl.EndOfInput()
	_ = tl.Items()
}

// FuzzDecoder feeds the lines of arbitrary input to the JSON-lines decoder.
func FuzzDecoder(f *testing.F) {
	for _, s := range fixtureLines(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder()
		var evs []events.Event
		for i, line := range bytes.Split(data, []byte("\n")) {
			evs = append(evs, d.DecodeAt("line "+string(rune('0'+i%10)), line)...)
		}
		evs = append(evs, d.Flush()...)
		checkEvents(t, evs)
	})
}

// FuzzStoreMessages decodes arbitrary text as a checkpoint's messages.
func FuzzStoreMessages(f *testing.F) {
	f.Add(`[{"role": "user", "content": "[TextContentBlock(text='hi', type='text', cache_control=None)]"}, {"role": "assistant", "tool_calls": [{"id": "t1", "name": "bash", "arguments": {"command": "ls"}}]}, {"role": "tool", "content": "a\nb", "tool_call_id": "t1"}]`)
	f.Add(`[{"role": "system", "content": "p"}, {"role": "user", "content": "[System: nudge]"}, {"role": "assistant", "content": NaN}]`)
	f.Add(`[{"role": "user", "content": "cut`)
	f.Add(`{"role": "user"}`)
	for _, s := range fixtureLines(f) {
		var e struct {
			Data struct {
				Messages json.RawMessage `json:"messages"`
			} `json:"data"`
		}
		if json.Unmarshal(s, &e) == nil && len(e.Data.Messages) > 0 {
			f.Add(string(e.Data.Messages))
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		s := &snapshot{cpID: "1", messages: text}
		evs := s.conversation()
		s.usage = []row{{"input_tokens": int64(1)}}
		s.linkUsage(evs)
		s.tools = []row{{"tool_name": "bash", "args_json": `{"command": "ls"}`, "result_json": `{"error": "x", "exit_code": 2}`}}
		s.linkTools(evs)
		checkEvents(t, evs)
	})
}

// FuzzReprBlocks reads arbitrary text as Python-printed content blocks.
func FuzzReprBlocks(f *testing.F) {
	for _, s := range []string{
		`[TextContentBlock(text='hi', type='text', cache_control=None)]`,
		`[TextContentBlock(text="it's \x00 \u00e9 \U0001f642 \ud800", type='text', cache_control=CacheControl(type='ephemeral'))]`,
		`[ImageContentBlock(source=ImageSource(type='base64', media_type='image/png', data='AAAA'), type='image', cache_control=None)]`,
		`TextContentBlock(text='x')`,
		`[XBlock(a={'k': [1, -2.5e3, (3,), None, True]}, b=-inf, c=nan)]`,
		`[TextContentBlock(text='\`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts, ok := reprBlocks(s)
		if !ok {
			return
		}
		if !json.Valid(parts) {
			t.Fatalf("invalid JSON from %q: %s", s, parts)
		}
		c := normalize.ParseContent(parts)
		if !utf8.ValidString(c.Text) {
			t.Fatalf("invalid UTF-8 text from %q", s)
		}
	})
}
