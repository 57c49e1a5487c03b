package codex

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

// TestLiveSameTimeline: reporting deltas as they come (a live view) or
// each turn whole (an import) ends in the same timeline.
func TestLiveSameTimeline(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/*.json*")
	for _, p := range files {
		s, err := ingest.Sniff(p)
		if err != nil {
			t.Fatal(err)
		}
		var outs [2]string
		for i, live := range []bool{false, true} {
			d := NewDecoder()
			d.Live = live
			tl := events.NewTimeline()
			if err := decodeFile(context.Background(), s, d, func(ev events.Event) { tl.Apply(ev) }); err != nil {
				t.Fatal(err)
			}
			tl.EndOfInput()
			var b bytes.Buffer
			_ = transcript.WriteJSONL(&b, tl)
			outs[i] = b.String()
		}
		if outs[0] != outs[1] {
			t.Errorf("%s: live differs:\n%s\nimport:\n%s", p, outs[1], outs[0])
		}
	}
}
