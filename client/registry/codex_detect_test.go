package registry

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

// TestCodexDetectedWithUnknownItems: what marks a file as codex's is its
// event envelope (thread.started, turn.*, item.*), not the item types
// perch knows: a file of item types perch has never seen is still codex's,
// and its unknown items become notices, not a refusal or another system.
func TestCodexDetectedWithUnknownItems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, c := range map[string]struct {
		lines  []string
		notice string // a notice the import shows
	}{
		"unknown-items": {[]string{
			`{"type":"thread.started","thread_id":"t1"}`,
			`{"type":"turn.started"}`,
			`{"type":"item.completed","item":{"id":"item_0","type":"image_generation","status":"completed","result":"x"}}`,
			`{"type":"item.completed","item":{"id":"item_1","type":"hook_prompt","text":"lint first"}}`,
			`{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":2}}`,
		}, `an unknown codex item \"image_generation\"`},
		// Items shaped like other systems' records inside codex's envelope.
		"lookalike-items": {[]string{
			`{"type":"item.completed","item":{"id":"item_0","type":"assistant","message":{"content":"hi"},"session_id":"s"}}`,
			`{"type":"item.completed","item":{"id":"item_1","type":"message","role":"assistant","content":"hi"}}`,
			`{"type":"turn.failed","error":{"message":"boom"}}`,
		}, `an unknown codex item \"assistant\"`},
		// A recording's tail: retries and an item of a later release, no thread.started.
		"tail": {[]string{
			`{"type":"error","message":"Reconnecting... 1/5 (stream disconnected)"}`,
			`{"type":"item.updated","item":{"id":"item_7","type":"context_compaction","status":"in_progress"}}`,
		}, "Reconnecting... 1/5"},
	} {
		p := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(p, []byte(strings.Join(c.lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := ingest.Sniff(p)
		if err != nil {
			t.Fatal(err)
		}
		if k, ok := Detect(s); !ok || k.Name != "codex" {
			t.Errorf("%s: detected as %q, want codex", name, k.Name)
			continue
		}
		res, err := Run(context.Background(), p, "", ingest.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b bytes.Buffer
		if err := transcript.WriteJSONL(&b, res.Timeline); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), `"type":"notice"`) || !strings.Contains(b.String(), c.notice) {
			t.Errorf("%s: the import lacks the notice %q:\n%s", name, c.notice, b.String())
		}
	}
}
