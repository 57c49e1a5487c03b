package claudecode_test

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/internal/importtest"
	"github.com/perch-tui/perch/internal/ingest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fixtures are the files of testdata (not its subfolders).
func fixtures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"*.json", "*.jsonl", "*.sse"} {
		m, err := filepath.Glob(filepath.Join("testdata", pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		t.Fatal("no fixtures")
	}
	return out
}

// TestGolden: every fixture imports to its golden transcript, both with
// --from claude-code and detected.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, path := range fixtures(t) {
		name, _, _ := strings.Cut(filepath.Base(path), ".") // the golden is golden/<stem>.jsonl
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			golden := filepath.Join("testdata", "golden", name+".jsonl")
			importtest.Check(t, "claude-code", path, golden, ingest.Options{}, false, *update)
		})
	}
}
