package anthropic_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/importer"
	"github.com/perch-tui/perch/ingest"
	"github.com/perch-tui/perch/transcript"
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

// importJSONL is `perch import --format jsonl [--from from] path`.
func importJSONL(t *testing.T, path, from string) []byte {
	t.Helper()
	res, err := importer.Run(context.Background(), path, from, ingest.Options{})
	if err != nil {
		t.Fatalf("import %s (from %q): %v", path, from, err)
	}
	if res.Kind != "anthropic" {
		t.Fatalf("%s imported as %q, want anthropic", path, res.Kind)
	}
	var b bytes.Buffer
	if err := transcript.WriteJSONL(&b, res.Timeline); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGolden: every fixture imports to its golden transcript, both with
// --from anthropic and detected.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, path := range fixtures(t) {
		base := filepath.Base(path)
		name, _, _ := strings.Cut(base, ".") // the golden is golden/<stem>.jsonl
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := importJSONL(t, path, "anthropic")
			if auto := importJSONL(t, path, ""); !bytes.Equal(auto, got) {
				t.Errorf("detected import differs from --from anthropic:\n%s\nvs\n%s", auto, got)
			}
			golden := filepath.Join("testdata", "golden", name+".jsonl")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("missing golden %s (go test -update): %v", golden, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from golden:\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
}
