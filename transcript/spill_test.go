package transcript

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/spill"
	"github.com/perch-tui/perch/sse"
)

// TestCorpusSpilledIsIdentical: a timeline that keeps every text in a
// spill file (not only the long ones) exports byte for byte what the one
// that keeps them in memory does, in every format, for every stream of
// the corpus: the readers see the same texts and the same tool details.
func TestCorpusSpilledIsIdentical(t *testing.T) {
	files, _ := filepath.Glob("../client/maria/testdata/streams/*.sse")
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

// TestCorpusFrozenIsIdentical: a timeline whose settled items were all
// frozen (written to the store as records, read back on demand) exports
// byte for byte what the one in memory does, in every format, for every
// stream of the corpus.
func TestCorpusFrozenIsIdentical(t *testing.T) {
	files, _ := filepath.Glob("../client/maria/testdata/streams/*.sse")
	frozeAny := false
	for _, path := range files {
		base := strings.TrimSuffix(filepath.Base(path), ".sse")
		mem := replay(t, path)
		f := spill.OpenIn(t.TempDir(), base)
		cold := replaySpilled(t, path, f)
		cold.Freeze(0)
		runtime.GC() // the items frozen are held weakly: read back the records
		frozeAny = frozeAny || cold.Frozen() > 0
		for _, format := range []string{"jsonl", "json", "md"} {
			var a, b bytes.Buffer
			if err := writeWhole(&a, mem, format, base); err != nil {
				t.Fatal(err)
			}
			if err := writeWhole(&b, cold, format, base); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("%s %s differs when frozen:\n--- frozen\n%s\n--- memory\n%s", base, format, b.Bytes(), a.Bytes())
			}
		}
		f.Close()
	}
	if !frozeAny {
		t.Error("no item of the corpus was frozen")
	}
}
