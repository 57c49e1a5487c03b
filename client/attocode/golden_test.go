package attocode_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

var update = flag.Bool("update", false, "rewrite golden files (and the committed store fixture)")

// importJSONL imports path as from ("" detects) and returns the jsonl
// export and the kind that read it.
func importJSONL(t *testing.T, path, from string, opts ingest.Options) ([]byte, string) {
	t.Helper()
	res, err := registry.Run(context.Background(), path, from, opts)
	if err != nil {
		t.Fatalf("import %s (from %q): %v", path, from, err)
	}
	var b bytes.Buffer
	if err := transcript.WriteJSONL(&b, res.Timeline); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), res.Kind
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden %s (run go test -update): %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestStoreFixtureCurrent rewrites the committed store with -update; it
// runs first so the golden cases read the current one.
func TestStoreFixtureCurrent(t *testing.T) {
	path := filepath.Join("testdata", "fixtures", "store.db")
	if *update {
		_ = os.Remove(path)
		buildStore(t, path)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("missing %s (run go test -update): %v", path, err)
	}
}

// TestGolden: every fixture's export equals its golden file, read with
// --from attocode and detected alike.
func TestGolden(t *testing.T) {
	cases := []struct {
		fixture, golden string
		opts            ingest.Options
	}{
		{"session.jsonl", "session.jsonl", ingest.Options{}},
		{"session_hostile.jsonl", "session_hostile.jsonl", ingest.Options{}},
		{"trace.jsonl", "trace.jsonl", ingest.Options{}},
		{"trace_truncated.jsonl", "trace_truncated.jsonl", ingest.Options{}},
		{"store.db", "store.jsonl", ingest.Options{}},
		{"store.db", "store.session-b7e.jsonl", ingest.Options{Session: "b7e"}},
		{"store.db", "store.session-c0ffee.jsonl", ingest.Options{Session: "c0ffee00-5d1e-4f00-9a3b-000000000003"}},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			if !*update {
				t.Parallel()
			}
			path := filepath.Join("testdata", "fixtures", c.fixture)
			named, _ := importJSONL(t, path, "attocode", c.opts)
			detected, kind := importJSONL(t, path, "", c.opts)
			if kind != "attocode" {
				t.Fatalf("%s detected as %q", c.fixture, kind)
			}
			if !bytes.Equal(named, detected) {
				t.Errorf("--from attocode and detection differ:\n%s\n---\n%s", named, detected)
			}
			checkGolden(t, c.golden, named)
		})
	}
}
