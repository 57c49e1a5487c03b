package claudecode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/internal/ingest"
)

// TestRealRunTotals: the session's totals (the status bar's tokens and
// cost) are one scope, the run's: the tokens and cost of every request it
// made, its subagents' included, as the result line's modelUsage and
// total_cost_usd report them, whether or not the replies said their own
// usage (stream-json without partial messages prints every reply before
// its usage is known; with them, the replies' usage is counted once and
// the result adds only the rest, the subagents').
func TestRealRunTotals(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"tools-lines", "tools-partial", "subagent-lines", "subagent-partial"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", "real", name+".stream.jsonl")
			want := resultUsage(t, path)
			var in, out int64
			for _, m := range want.ModelUsage {
				in += m.Input + m.CacheRead + m.CacheWrite
				out += m.Output
			}
			res, err := registry.Run(context.Background(), path, "claude-code", ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Timeline.Meta().Totals
			if got.OutputTokens != out || got.InputTokens != in {
				t.Errorf("tokens %d in, %d out; the run's modelUsage says %d, %d", got.InputTokens, got.OutputTokens, in, out)
			}
			if !got.HasCost || fmt.Sprintf("%.6f", got.CostUSD) != fmt.Sprintf("%.6f", want.Cost) {
				t.Errorf("cost %v (known %v), the run's result says %v", got.CostUSD, got.HasCost, want.Cost)
			}
		})
	}
}

type resultLine struct {
	Type       string  `json:"type"`
	Cost       float64 `json:"total_cost_usd"`
	ModelUsage map[string]struct {
		Input      int64 `json:"inputTokens"`
		Output     int64 `json:"outputTokens"`
		CacheRead  int64 `json:"cacheReadInputTokens"`
		CacheWrite int64 `json:"cacheCreationInputTokens"`
	} `json:"modelUsage"`
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
