package claudecode_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/internal/importtest"
	"github.com/perch-tui/perch/internal/ingest"
)

// realCaptures are the files testdata/capture.sh recorded from the real
// CLI: stream-json output and session files (not the request logs).
func realCaptures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"*.stream.jsonl", "*.session.jsonl"} {
		m, err := filepath.Glob(filepath.Join("testdata", "real", pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		t.Fatal("no real captures")
	}
	return out
}

// TestRealGolden: every capture of the real CLI imports to its golden
// transcript, with --from claude-code and detected.
func TestRealGolden(t *testing.T) {
	t.Parallel()
	for _, path := range realCaptures(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			golden := filepath.Join("testdata", "real", "golden", name+".jsonl")
			importtest.Check(t, "claude-code", path, golden, ingest.Options{}, false, *update)
		})
	}
}

// TestRealToolOutputs: the tool results the CLI sent back to the model (the
// fake provider logged them: testdata/real/*.requests.jsonl) are the
// ground truth of what its tools returned. Every result of the main
// conversation is a tool of the import with that output and status; a
// subagent's results are not top-level tools.
func TestRealToolOutputs(t *testing.T) {
	t.Parallel()
	reqs, err := filepath.Glob(filepath.Join("testdata", "real", "*.requests.jsonl"))
	if err != nil || len(reqs) == 0 {
		t.Fatalf("no request logs (%v)", err)
	}
	for _, req := range reqs {
		run := strings.TrimSuffix(req, ".requests.jsonl") // testdata/real/<scenario>-<mode>
		imports := []string{run + ".stream.jsonl"}
		if scenario, ok := strings.CutSuffix(run, "-lines"); ok {
			imports = append(imports, scenario+".session.jsonl")
		}
		want := sentResults(t, req)
		for _, path := range imports {
			t.Run(filepath.Base(path), func(t *testing.T) {
				t.Parallel()
				out, _ := importtest.Import(t, path, "claude-code", ingest.Options{})
				got := map[string]exportTool{}
				for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
					var r exportTool
					if err := json.Unmarshal(line, &r); err != nil {
						t.Fatal(err)
					}
					if r.Type == "tool" {
						got[r.ID] = r
					}
				}
				for id, w := range want {
					g, ok := got[id]
					switch {
					case w.subagent && ok:
						t.Errorf("%s: the subagent's call %s is a top-level tool", path, id)
					case w.subagent:
					case !ok:
						t.Errorf("%s: no tool %s (the CLI sent its result %q)", path, id, w.output)
					case strings.TrimRight(g.Output, "\n") != strings.TrimRight(w.output, "\n"):
						// (The CLI sends a subagent's report to the model with a
						// final newline its own output does not print.)
						t.Errorf("%s: tool %s output %q, the CLI sent %q", path, id, g.Output, w.output)
					case (g.Status == "error") != w.isError:
						t.Errorf("%s: tool %s status %s, the CLI sent is_error %v", path, id, g.Status, w.isError)
					}
				}
			})
		}
	}
}

type exportTool struct {
	Type, ID, Status, Output string
}

type sentResult struct {
	output            string
	isError, subagent bool
}

// sentResults reads a request log: tool_use_id → what the CLI sent.
func sentResults(t *testing.T, path string) map[string]sentResult {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]sentResult{}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r struct {
			Conversation string `json:"conversation"`
			Results      []struct {
				ID      string          `json:"tool_use_id"`
				Content json.RawMessage `json:"content"`
				IsError bool            `json:"is_error"`
			} `json:"tool_results"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, res := range r.Results {
			var text string
			if json.Unmarshal(res.Content, &text) != nil {
				var blocks []struct{ Text string }
				if err := json.Unmarshal(res.Content, &blocks); err != nil {
					t.Fatalf("%s: content %s: %v", path, res.Content, err)
				}
				var parts []string
				for _, b := range blocks {
					parts = append(parts, b.Text)
				}
				text = strings.Join(parts, "\n")
			}
			out[res.ID] = sentResult{output: text, isError: res.IsError, subagent: r.Conversation == "subagent"}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no tool results", path)
	}
	return out
}
