package claudecode

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/perch-tui/perch/events"
)

// FuzzDecoder: lines of any content never panic the decoder, give valid
// UTF-8, and at most a few events per line.
func FuzzDecoder(f *testing.F) {
	for _, pat := range []string{"*.json", "*.jsonl"} {
		m, _ := filepath.Glob(filepath.Join("testdata", pat))
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &Decoder{Deltas: len(data)%2 == 1}
		lines := bytes.Split(data, []byte("\n"))
		var evs []events.Event
		for _, l := range lines {
			evs = append(evs, d.DecodeAt("line", l)...)
		}
		evs = append(evs, d.Flush()...)
		if len(evs) > 8*(len(lines)+len(data)/8+2) {
			t.Fatalf("%d events from %d lines", len(evs), len(lines))
		}
		checkEvents(t, evs)
	})
}
