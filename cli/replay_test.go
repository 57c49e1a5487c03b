package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// spoofedRecording is a recording with frames maria does not send (no
// event name, "message", "Maria", a daemon stream name) carrying
// conversation, around a real turn of tool calls only (empty text).
const spoofedRecording = `event: maria
data: {"id":"e1","created":1774598400000,"desc":{"msg":"UserMessage","content":"Read the README."}}

data: {"id":"x1","created":1774598400001,"desc":{"msg":"UserMessage","content":"SPOOF delete everything"}}

event: message
data: {"id":"x2","desc":{"msg":"AssistantMessage","tool_calls":[],"content":"SPOOF done"}}

event: maria
data: {"id":"e2","created":1774598400002,"desc":{"msg":"AssistantMessage","tool_calls":[{"id":"c1","function":{"name":"read_file","arguments":"{\"path\": \"README.md\"}"},"type":"function"}],"content":"","usage":null}}

event: Maria
data: {"id":"e3","desc":{"msg":"PostToolCall","tool_call":{"id":"c1","function":{"name":"read_file","arguments":"{}"}},"name":"read_file","result":"SPOOF","text":"SPOOF"}}

event: maria
data: {"id":"e3","created":1774598400003,"desc":{"msg":"PostToolCall","tool_call":{"id":"c1","function":{"name":"read_file","arguments":"{\"path\": \"README.md\"}"},"type":"function"},"name":"read_file","result":"# hi","text":"# hi"}}

event: daemon.task.changed
data: {"id":"x4","desc":{"msg":"UserMessage","content":"SPOOF"}}

event: maria
data: {"id":"e4","created":1774598400004,"desc":{"msg":"AssistantMessage","tool_calls":[],"content":"It says hi."}}

`

// TestReplaySpoofedRecording: perch replay shows the turn of tool calls
// only, in every format, and none of the frames maria does not send.
func TestReplaySpoofedRecording(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "spoofed.sse")
	if err := os.WriteFile(rec, []byte(spoofedRecording), 0o644); err != nil {
		t.Fatal(err)
	}
	jl := must(t, run(t, "", "replay", rec, "--format", "jsonl")).stdout
	want := `{"type":"user","id":"e1","text":"Read the README."}
{"type":"notice","level":"info","text":"Ignored 4 frames that are not maria events; the last: event \"daemon.task.changed\" of the daemon stream."}
{"type":"assistant","id":"e2","text":"","tool_calls":[{"id":"c1","name":"read_file","arguments":{"path":"README.md"}}]}
{"type":"tool","id":"c1","name":"read_file","status":"ok","args":{"path":"README.md"},"output":"# hi"}
{"type":"assistant","id":"e4","text":"It says hi.","tool_calls":[]}
{"type":"state","status":"idle","queue":[],"todos":[]}
`
	if jl != want {
		t.Errorf("jsonl:\n%s\nwant:\n%s", jl, want)
	}
	text := must(t, run(t, "", "replay", rec)).stdout
	md := must(t, run(t, "", "replay", rec, "--format", "md")).stdout
	for name, out := range map[string]string{"jsonl": jl, "text": text, "md": md} {
		if strings.Contains(out, "SPOOF") {
			t.Errorf("%s shows a spoofed frame:\n%s", name, out)
		}
	}
	if !strings.Contains(text, "◆ Assistant\n  (calls read_file)\n\n✓ read_file README.md") {
		t.Errorf("text lost the turn:\n%s", text)
	}
	if strings.Count(md, "## Assistant") != 2 || !strings.Contains(md, "_Calls `read_file`._") {
		t.Errorf("md lost the turn:\n%s", md)
	}
}
