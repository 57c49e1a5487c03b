package anthropic_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perch-tui/perch/client/anthropic"
	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/internal/ingest"
)

// TestDetect: Anthropic's shapes are recognised, and look-alikes of other
// APIs and systems are not claimed.
func TestDetect(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		data string
		want bool
	}{
		{"response", `{"id":"msg_1","type":"message","role":"assistant","content":[]}`, true},
		{"request with tool blocks", `{"model":"x","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"b"}]}]}`, true},
		{"request with a system prompt", `{"model":"x","system":"s","messages":[{"role":"user","content":"hi"}]}`, true},
		{"request for a claude model", `{"model":"claude-3-opus","messages":[{"role":"user","content":"hi"}]}`, true},
		{"request whose system blocks come first", `{"system":[{"type":"text","text":"s"}],"model":"m","messages":[{"role":"user","content":"hi"}]}`, true},
		{"stream events as lines", "{\"type\":\"message_start\",\"message\":{}}\n{\"type\":\"message_stop\"}\n", true},
		{"sse stream", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n", true},
		{"log of pairs", `[{"request":{"model":"claude-x","messages":[]},"response":{"type":"message","role":"assistant","content":[]}}]`, true},
		{"openai request", `{"model":"gpt-4o","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}`, false},
		{"openai tool calls", `{"model":"claude-x","messages":[{"role":"assistant","content":null,"tool_calls":[]}]}`, false},
		{"openai chunk stream", "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[]}\n\ndata: [DONE]\n\n", false},
		{"pings and errors only", "data: {\"type\":\"ping\"}\n\ndata: {\"type\":\"error\",\"error\":\"x\"}\n\n", false},
		{"claude code lines", "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}\n{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":[]},\"session_id\":\"s\"}\n", false},
		{"maria events", "event: maria\ndata: {\"id\":1,\"msg\":\"PostConversation\"}\n\n", false},
		{"pynchy rows", `[{"chat_jid":"a@g.us","type":"message","content":"hi"}]`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := ingest.SniffBytes("x", []byte(c.data), true)
			got := anthropic.Importer().Detect(s) > 0
			if got != c.want {
				t.Errorf("detect = %v, want %v (shape %s)", got, c.want, s.Shape)
			}
			if k, ok := registry.Detect(s); c.want && (!ok || k.Name != "anthropic") {
				t.Errorf("importer picks %q, want anthropic", k.Name)
			}
		})
	}
}

// TestNotOthersFiles: no fixture of another kind is claimed.
func TestNotOthersFiles(t *testing.T) {
	t.Parallel()
	var files []string
	for _, pat := range []string{"../claudecode/testdata/*.json*", "../maria/testdata/streams/*.sse",
		"../suna/testdata/*.json*", "../suna/testdata/*.sse", "../pynchy/testdata/*.json*", "../pynchy/testdata/*.sse", "../pynchy/testdata/*.ndjson"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skip("no fixtures of other kinds")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := anthropic.Importer().Detect(ingest.SniffBytes(f, data, true)); n > 0 {
			t.Errorf("%s: anthropic claims it (%d)", f, n)
		}
	}
}
