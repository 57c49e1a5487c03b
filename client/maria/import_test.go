package maria

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

var update = flag.Bool("update", false, "rewrite golden files")

func importJSONL(t *testing.T, path string) []byte {
	t.Helper()
	s, err := ingest.Sniff(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := detect(s); n == 0 {
		t.Fatalf("%s: not detected as maria (%v)", path, s.Shape)
	}
	tl := events.NewTimeline()
	if err := importFile(context.Background(), s, ingest.Options{}, func(ev events.Event) { tl.Apply(ev) }); err != nil {
		t.Fatal(err)
	}
	tl.EndOfInput()
	var b bytes.Buffer
	if err := transcript.WriteJSONL(&b, tl); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	t.Parallel()
	inputs, _ := filepath.Glob("testdata/*.*") // files; testdata/streams holds the decoder's corpus
	for _, in := range inputs {
		stem, ext, _ := strings.Cut(filepath.Base(in), ".")
		if ext == "jsonl" {
			continue // a golden
		}
		got := importJSONL(t, in)
		g := filepath.Join("testdata", stem+".jsonl")
		if *update {
			if err := os.WriteFile(g, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(g)
		if err != nil {
			t.Fatalf("missing golden %s (go test -update): %v", g, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", in, got, want)
		}
	}
}

// FuzzImport: any file content imports without panicking, whatever shape
// it is sniffed as.
func FuzzImport(f *testing.F) {
	inputs, _ := filepath.Glob("testdata/*.*")
	for _, in := range inputs {
		if b, err := os.ReadFile(in); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "in")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := ingest.Sniff(p)
		if err != nil {
			return
		}
		tl := events.NewTimeline()
		_ = importFile(context.Background(), s, ingest.Options{}, func(ev events.Event) { tl.Apply(ev) })
	})
}
