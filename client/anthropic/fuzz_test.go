package anthropic

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// seed adds every fixture to the corpus.
func seed(f *testing.F) {
	for _, pat := range []string{"*.json", "*.jsonl", "*.sse"} {
		m, _ := filepath.Glob(filepath.Join("testdata", pat))
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
}

// FuzzDecoder: the stream decoder, fed the input as SSE frames and as
// lines, never panics and emits valid UTF-8, at most a few events per
// record.
func FuzzDecoder(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &Decoder{Deltas: len(data)%2 == 0}
		var evs []events.Event
		_ = sse.ReadFrames(bytes.NewReader(data), func(fr events.Frame) error {
			evs = append(evs, d.DecodeFrame("frame", fr)...)
			return nil
		})
		evs = append(evs, d.Flush()...)
		lines := bytes.Split(data, []byte("\n"))
		for _, l := range lines {
			evs = append(evs, d.DecodeAt("line", l)...)
		}
		evs = append(evs, d.Flush()...)
		if len(evs) > 4*(len(lines)+len(data)/8+2) {
			t.Fatalf("%d events from %d bytes", len(evs), len(data))
		}
		checkEvents(t, evs)
	})
}

// FuzzConversation: documents of a log, whole and line by line.
func FuzzConversation(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c := NewConversation()
		evs := c.DecodeAt("doc", data)
		for _, l := range bytes.Split(data, []byte("\n")) {
			evs = append(evs, c.DecodeAt("line", l)...)
		}
		checkEvents(t, evs)
	})
}
