package transcript

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

var update = flag.Bool("update", false, "rewrite golden files")

// replay decodes a recorded stream file into a timeline.
func replay(t *testing.T, path string) *events.Timeline {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tl := events.NewTimeline()
	dec := maria.NewDecoder()
	if err := sse.ReadFrames(f, func(fr events.Frame) error {
		for _, ev := range dec.Decode(fr) {
			tl.Apply(ev)
		}
		return nil
	}); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tl
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

// TestCorpusGolden: the transcripts of docs/protocol.md §10's streams, in all
// three dialects, match golden files; and each stream replayed twice (as a
// reconnect does) gives the same transcript.
func TestCorpusGolden(t *testing.T) {
	files, _ := filepath.Glob("../client/maria/testdata/streams/*.sse")
	if len(files) < 15 {
		t.Fatalf("corpus has %d files, want >= 15", len(files))
	}
	for _, path := range files {
		base := strings.TrimSuffix(filepath.Base(path), ".sse")
		t.Run(base, func(t *testing.T) {
			tl := replay(t, path)
			var jl, md bytes.Buffer
			if err := WriteJSONL(&jl, tl); err != nil {
				t.Fatal(err)
			}
			if err := WriteMarkdown(&md, tl, base); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, base+".jsonl", jl.Bytes())
			checkGolden(t, base+".md", md.Bytes())

			// A reconnect replays the whole log: nothing may double.
			data, _ := os.ReadFile(path)
			tl2 := events.NewTimeline()
			dec2 := maria.NewDecoder()
			for i := 0; i < 2; i++ {
				dec2.Reconnected()
				_ = sse.ReadFrames(bytes.NewReader(data), func(fr events.Frame) error {
					for _, ev := range dec2.Decode(fr) {
						tl2.Apply(ev)
					}
					return nil
				})
			}
			var jl2 bytes.Buffer
			_ = WriteJSONL(&jl2, tl2)
			if jl2.String() != jl.String() {
				t.Errorf("replayed twice differs:\n%s\nvs\n%s", jl2.String(), jl.String())
			}
		})
	}
}
