package claudecode_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/ingest"
	"github.com/perch-tui/perch/internal/importtest"
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
