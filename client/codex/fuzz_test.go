package codex

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

// FuzzDecode feeds any bytes to the decoder line by line, and to
// detection: nothing may panic, and every string it emits must be valid
// UTF-8.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"id":"0","msg":{"type":"exec_command_output_delta","call_id":"c","chunk":"/w=="}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		_ = detect(ingest.SniffBytes("x", in, true))
		d := NewDecoder()
		var evs []events.Event
		for i, line := range bytes.Split(in, []byte("\n")) {
			if len(bytes.TrimSpace(line)) > 0 {
				evs = append(evs, d.Decode("line "+strconv.Itoa(i+1), ingest.Repair(bytes.TrimSpace(line)))...)
			}
		}
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
	for _, td := range ev.Todos {
		strs = append(strs, td.ID, td.Content, td.Status)
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
