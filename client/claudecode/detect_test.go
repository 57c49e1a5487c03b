package claudecode_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perch-tui/perch/client/claudecode"
	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/internal/ingest"
)

// TestDetect: Claude Code's output is recognised; other systems' records
// with the same type names are not claimed.
func TestDetect(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		data string
		want bool
	}{
		{"init line", "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}\n{\"x\":1}\n", true},
		{"assistant line", "{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":[]},\"parent_tool_use_id\":null,\"session_id\":\"s\"}\n{}\n", true},
		{"stream event line", "{\"type\":\"stream_event\",\"event\":{\"type\":\"ping\"}}\n{}\n", true},
		{"result object", `{"type":"result","subtype":"success","result":"x","session_id":"s"}`, true},
		{"verbose array", `[{"type":"result","subtype":"success","duration_ms":1}]`, true},
		{"suna rows", "{\"type\":\"assistant\",\"content\":\"{\\\"role\\\":\\\"assistant\\\"}\",\"thread_id\":\"t\"}\n{\"type\":\"user\",\"content\":\"hi\",\"thread_id\":\"t\"}\n", false},
		{"pynchy trace", `[{"chat_jid":"j","type":"result","sender_name":"result_meta","content":"{}"}]`, false},
		{"anthropic response", `{"id":"m","type":"message","role":"assistant","content":[]}`, false},
		{"bare messages", "{\"type\":\"user\",\"message\":\"hi\"}\n{\"type\":\"result\"}\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := ingest.SniffBytes("x", []byte(c.data), true)
			if got := claudecode.Importer().Detect(s) > 0; got != c.want {
				t.Errorf("detect = %v, want %v (shape %s)", got, c.want, s.Shape)
			}
			if k, ok := registry.Detect(s); c.want && (!ok || k.Name != "claude-code") {
				t.Errorf("importer picks %q, want claude-code", k.Name)
			}
		})
	}
}

// TestNotOthersFiles: no fixture of another kind is claimed.
func TestNotOthersFiles(t *testing.T) {
	t.Parallel()
	var files []string
	for _, pat := range []string{"../anthropic/testdata/*.json*", "../anthropic/testdata/*.sse", "../maria/testdata/streams/*.sse",
		"../suna/testdata/*.json*", "../suna/testdata/*.sse", "../pynchy/testdata/*.json*", "../pynchy/testdata/*.sse", "../pynchy/testdata/*.ndjson"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := claudecode.Importer().Detect(ingest.SniffBytes(f, data, true)); n > 0 {
			t.Errorf("%s: claude-code claims it (%d)", f, n)
		}
	}
}
