package openai

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// FuzzDecode feeds any bytes to the decoder, line by line (as a stream or
// JSON lines) and whole (as one record), and to detection: nothing may
// panic, and every string it emits must be valid UTF-8.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":{"a":"\xff"}}}]}}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		_ = detect(ingest.SniffBytes("x", in, true))
		d := NewDecoder()
		var evs []events.Event
		for i, line := range bytes.Split(in, []byte("\n")) {
			evs = append(evs, d.DecodeLine("line "+strconv.Itoa(i+1), ingest.Repair(line))...)
		}
		evs = append(evs, d.Decode("document", ingest.Repair(in))...)
		evs = append(evs, d.Flush()...)
		tl := events.NewTimeline()
		for _, ev := range evs {
			checkUTF8(t, ev)
			tl.Apply(ev)
		}
		tl.EndOfInput()
	})
}

func checkUTF8(t *testing.T, ev events.Event) {
	t.Helper()
	strs := []string{ev.ID, ev.Text, ev.Thinking, ev.StopReason}
	for _, c := range ev.ToolCalls {
		strs = append(strs, c.ID, c.Name, c.ArgsRaw)
	}
	if ev.Tool != nil {
		strs = append(strs, ev.Tool.Name, ev.Tool.Call.ID)
		if r := ev.Tool.Result; r != nil {
			strs = append(strs, r.Text, r.ErrorText)
		}
	}
	for _, s := range strs {
		if !utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 in %v event: %q", ev.Kind, s)
		}
	}
}
