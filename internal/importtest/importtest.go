// Package importtest is what the importers' golden tests share: importing
// a fixture as `perch import --format jsonl` does, and comparing the result
// with its golden file (or rewriting it under -update).
package importtest

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

// Import runs `perch import --format jsonl [--from from] path` with opts
// and returns the output and the kind that read the file.
func Import(t testing.TB, path, from string, opts ingest.Options) (out []byte, kind string) {
	t.Helper()
	res, err := registry.Run(context.Background(), path, from, opts)
	if err != nil {
		t.Fatalf("import %s (--from %q): %v", path, from, err)
	}
	var b bytes.Buffer
	if err := transcript.WriteJSONL(&b, res.Timeline); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), res.Kind
}

// Golden compares got with the file golden, or rewrites it when update is
// set.
func Golden(t testing.TB, golden string, got []byte, update bool) {
	t.Helper()
	if update {
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
		t.Errorf("%s differs from its golden:\n--- got\n%s\n--- want\n%s", golden, got, want)
	}
}

// Check is a fixture's whole golden test: imported with --from kind it
// equals the golden; unless the shape is ambiguous, detection picks kind
// and gives the same output.
func Check(t testing.TB, kind, path, golden string, opts ingest.Options, ambiguous, update bool) {
	t.Helper()
	got, _ := Import(t, path, kind, opts)
	Golden(t, golden, got, update)
	if ambiguous {
		return
	}
	auto, detected := Import(t, path, "", opts)
	if detected != kind {
		t.Fatalf("%s is detected as %q, want %q", path, detected, kind)
	}
	if !bytes.Equal(auto, got) {
		t.Errorf("%s: the detected import differs from --from %s", path, kind)
	}
}
