package suna_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden .jsonl files")

// fixtures are every input file of testdata (the goldens are their
// .jsonl twins; a fixture that is itself JSON lines ends in .lines.jsonl).
func fixtures(t *testing.T) []string {
	t.Helper()
	var out []string
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || (strings.HasSuffix(n, ".jsonl") && !strings.HasSuffix(n, ".lines.jsonl")) {
			continue
		}
		out = append(out, filepath.Join("testdata", n))
	}
	if len(out) == 0 {
		t.Fatal("no fixtures")
	}
	return out
}

func golden(path string) string {
	base := strings.TrimSuffix(path, filepath.Ext(path))
	base = strings.TrimSuffix(base, ".lines")
	return base + ".jsonl"
}

func export(t *testing.T, path, from string) (string, []byte) {
	t.Helper()
	res, err := registry.Run(context.Background(), path, from, ingest.Options{})
	if err != nil {
		t.Fatalf("import %s (from %q): %v", path, from, err)
	}
	var b bytes.Buffer
	if err := transcript.WriteJSONL(&b, res.Timeline); err != nil {
		t.Fatal(err)
	}
	return res.Kind, b.Bytes()
}

// TestGolden: each fixture imports, named and detected, to its golden.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			_, named := export(t, path, "suna")
			kind, detected := export(t, path, "")
			if kind != "suna" {
				t.Fatalf("detected as %q, want suna", kind)
			}
			if !bytes.Equal(named, detected) {
				t.Fatalf("--from suna and detection disagree:\n%s\n---\n%s", named, detected)
			}
			g := golden(path)
			if *update {
				if err := os.WriteFile(g, named, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(g)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(named, want) {
				t.Errorf("%s differs from %s:\n%s", path, g, diff(string(want), string(named)))
			}
		})
	}
}

// diff shows the first lines that differ.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\nwant " + a + "\ngot  " + b
		}
	}
	return "(same lines)"
}
