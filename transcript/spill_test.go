package transcript

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/spill"
	"github.com/perch-tui/perch/sse"
)

// TestCorpusSpilledIsIdentical: a timeline that keeps every text in a
// spill file (not only the long ones) exports byte for byte what the one
// that keeps them in memory does, in every format, for every stream of
// the corpus: the readers see the same texts and the same tool details.
func TestCorpusSpilledIsIdentical(t *testing.T) {
	files, _ := filepath.Glob("../backend/maria/testdata/streams/*.sse")
	if len(files) == 0 {
		t.Fatal("no corpus")
	}
	for _, path := range files {
		base := strings.TrimSuffix(filepath.Base(path), ".sse")
		t.Run(base, func(t *testing.T) {
			mem := replay(t, path)
			f := spill.OpenIn(t.TempDir(), base)
			defer f.Close()
			sp := replaySpilled(t, path, f)
			for _, w := range []struct {
				name  string
				write func(*bytes.Buffer, *events.Timeline) error
			}{
				{"jsonl", func(b *bytes.Buffer, tl *events.Timeline) error { return WriteJSONL(b, tl) }},
				{"json", func(b *bytes.Buffer, tl *events.Timeline) error { return WriteJSON(b, tl) }},
				{"md", func(b *bytes.Buffer, tl *events.Timeline) error { return WriteMarkdown(b, tl, base) }},
				{"md full", func(b *bytes.Buffer, tl *events.Timeline) error { return WriteMarkdownFull(b, tl, base) }},
			} {
				var a, b bytes.Buffer
				if err := w.write(&a, mem); err != nil {
					t.Fatal(err)
				}
				if err := w.write(&b, sp); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a.Bytes(), b.Bytes()) {
					t.Errorf("%s differs when spilled:\n--- spilled\n%s\n--- memory\n%s", w.name, b.Bytes(), a.Bytes())
				}
			}
		})
	}
}

func replaySpilled(t *testing.T, path string, store events.BodyStore) *events.Timeline {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tl := events.NewTimeline()
	tl.SetBodyStore(store, events.SpillOptions{Min: 1})
	dec := maria.NewDecoder()
	if err := sse.ReadFrames(bytes.NewReader(data), func(fr events.Frame) error {
		for _, ev := range dec.Decode(fr) {
			tl.Apply(ev)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return tl
}
