package registry

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perch-tui/perch/internal/ingest"
)

// TestDetectPrefersTheDistinctive: a file whose fields name one system is
// detected as that system even when it also holds blocks perch does not
// know, or blocks that look like another system's; those show in the
// import, they do not pick a poorer reading.
func TestDetectPrefersTheDistinctive(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file, content, want string
	}{
		{"anthropic messages with an unknown block", "log.jsonl",
			`{"role":"user","content":[{"type":"text","text":"hi"}]}
{"id":"msg_01XYZ","role":"assistant","content":[{"type":"container_upload","file_id":"f1"},{"type":"text","text":"Hi"}],"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":0}}
`, "anthropic"},
		{"anthropic message with another API's block", "log.jsonl",
			`{"role":"user","content":"hi"}
{"role":"assistant","id":"msg_01XYZ","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hi"},{"type":"image_url","image_url":{"url":"x"}}],"usage":{"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0}}
`, "anthropic"},
		{"anthropic response with server tool blocks", "response.json",
			`{"id":"msg_01XYZ","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}},{"type":"text","text":"Hi"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}`,
			"anthropic"},
		{"one Claude Code line with an unknown block", "out.jsonl",
			`{"type":"assistant","message":{"id":"msg_01XYZ","model":"claude-sonnet-4-5","content":[{"type":"mystery_block","x":1},{"type":"text","text":"Hi"}],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}},"session_id":"s","parent_tool_use_id":null}
`, "claude-code"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), c.file)
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := ingest.Sniff(path)
			if err != nil {
				t.Fatal(err)
			}
			k, ok := Detect(s)
			if !ok || k.Name != c.want {
				var scores []string
				for _, k := range Default().Kinds() {
					if n := k.Detect(s); n > 0 {
						scores = append(scores, k.Name)
					}
				}
				t.Fatalf("detected as %q (ok %v; claimed by %v), want %s", k.Name, ok, scores, c.want)
			}
			res, err := Run(t.Context(), path, "", ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Timeline.Items()) == 0 {
				t.Error("the import shows nothing")
			}
		})
	}
}
