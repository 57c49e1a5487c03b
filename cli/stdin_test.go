package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// perch import - reads standard input, whatever its kind, and prints what
// importing the same bytes from a file prints: never an empty success.
func TestImportStdin(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "client", "suna", "testdata", "history_full.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := must(t, run(t, "", "import", path)).stdout
	if !strings.Contains(want, `"type":"user"`) {
		t.Fatalf("the file imports as:\n%s", want)
	}
	if got := must(t, run(t, string(raw), "import", "-")).stdout; got != want {
		t.Errorf("import - prints:\n%s\nwant:\n%s", got, want)
	}
	md := must(t, run(t, string(raw), "import", "-", "--format", "md")).stdout
	if !strings.HasPrefix(md, "# stdin\n") {
		t.Errorf("import - --format md is titled:\n%.80s", md)
	}
	r := run(t, "not a transcript", "import", "-")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "stdin: not a transcript perch recognises") {
		t.Errorf("import - of text: %+v", r)
	}
}

// A missing file is reported once, not as "open X: open X: …".
func TestImportMissingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "nope.json")
	for _, args := range [][]string{{"import", path}, {"replay", path, "--format", "md"}} {
		r := run(t, "", args...)
		if r.code != ExitFailure || strings.Count(r.stderr, path) != 1 || !strings.Contains(r.stderr, "no such file") {
			t.Errorf("%s: %+v", args[0], r)
		}
	}
}
