package registry

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

// kindOfDir names the importer whose fixtures live in client/<dir>.
func kindOfDir(dir string) string {
	if dir == "claudecode" {
		return "claude-code"
	}
	return dir
}

// fixtures finds every input file of every system's testdata that has a
// golden export next to it (or in a parent folder of testdata): stem.jsonl
// for an input stem.anything.
func fixtures(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	dirs, _ := filepath.Glob("../*/testdata")
	for _, td := range dirs {
		kind := kindOfDir(filepath.Base(filepath.Dir(td)))
		root := td
		if st, err := os.Stat(filepath.Join(td, "fixtures")); err == nil && st.IsDir() {
			root = filepath.Join(td, "fixtures") // goldens sit above the inputs
		}
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				if d != nil && d.IsDir() && d.Name() == "fuzz" {
					return filepath.SkipDir
				}
				return nil
			}
			name := d.Name()
			stem, _, _ := strings.Cut(name, ".")
			if name == stem+".jsonl" {
				return nil // a golden
			}
			if golden(p, stem) != "" {
				out[kind] = append(out[kind], p)
			}
			return nil
		})
	}
	return out
}

func golden(input, stem string) string {
	for dir := filepath.Dir(input); ; dir = filepath.Dir(dir) {
		for _, g := range []string{filepath.Join(dir, stem+".jsonl"), filepath.Join(dir, "golden", stem+".jsonl")} {
			if g != input {
				if _, err := os.Stat(g); err == nil {
					return g
				}
			}
		}
		if filepath.Base(dir) == "testdata" {
			return ""
		}
	}
}

// TestEveryFixtureIsDetectedAsItsOwnKind runs detection over the fixtures
// of every system together: no system may claim another's files, and the
// detected import equals the golden.
func TestEveryFixtureIsDetectedAsItsOwnKind(t *testing.T) {
	t.Parallel()
	all := fixtures(t)
	if len(all) < 3 {
		t.Fatalf("found fixtures of only %d systems", len(all))
	}
	for kind, files := range all {
		for _, f := range files {
			s, err := ingest.Sniff(f)
			if err != nil {
				t.Fatal(err)
			}
			k, ok := Detect(s)
			if !ok || k.Name != kind {
				t.Errorf("%s: detected as %q, want %q", f, k.Name, kind)
				continue
			}
			res, err := Run(context.Background(), f, "", ingest.Options{})
			var ue *ingest.UsageError
			if errors.As(err, &ue) {
				continue // needs a flag (--chat, --session): its own tests cover it
			}
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			var got bytes.Buffer
			if err := transcript.WriteJSONL(&got, res.Timeline); err != nil {
				t.Fatal(err)
			}
			stem, _, _ := strings.Cut(filepath.Base(f), ".")
			want, _ := os.ReadFile(golden(f, stem))
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s: detected import differs from its golden", f)
			}
		}
	}
}

func TestUnrecognisedFileIsAUsageError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"empty.json": "", "text.txt": "hello\n", "numbers.json": "[1,2,3]", "other.jsonl": "{\"x\":1}\n{\"y\":2}\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Run(context.Background(), p, "", ingest.Options{})
		var ue *ingest.UsageError
		if !errors.As(err, &ue) || !strings.Contains(ue.Msg, "--from") || !strings.Contains(ue.Msg, "maria") {
			t.Errorf("%s: want a usage error listing the kinds, got %v", name, err)
		}
	}
	if _, err := Run(context.Background(), filepath.Join(dir, "text.txt"), "nonsense", ingest.Options{}); err == nil {
		t.Error("an unknown --from kind must fail")
	}
}
