package claudecode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/internal/ingest"
)

// TestRealRunTotals: the session's totals (the status bar's tokens and
// cost) are the run's, as the result line reports them, whether or not the
// replies said their own usage: stream-json without partial messages
// prints every reply before its usage is known, so the result line is the
// only source; with partial messages the replies' usage already adds up
// to it, and the result must not be counted again.
func TestRealRunTotals(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"tools-lines", "tools-partial"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", "real", name+".stream.jsonl")
			want := resultUsage(t, path)
			res, err := registry.Run(context.Background(), path, "claude-code", ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Timeline.Meta().Totals
			if got.OutputTokens != want.Usage.OutputTokens {
				t.Errorf("output tokens %d, the run's result says %d", got.OutputTokens, want.Usage.OutputTokens)
			}
			if name == "tools-lines" && (!got.HasCost || got.CostUSD != want.Cost) {
				t.Errorf("cost %v (known %v), the run's result says %v", got.CostUSD, got.HasCost, want.Cost)
			}
		})
	}
}

type resultLine struct {
	Type  string  `json:"type"`
	Cost  float64 `json:"total_cost_usd"`
	Usage struct {
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

func resultUsage(t *testing.T, path string) resultLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var r resultLine
		if json.Unmarshal(line, &r) == nil && r.Type == "result" {
			return r
		}
	}
	t.Fatalf("%s has no result line", path)
	return resultLine{}
}
