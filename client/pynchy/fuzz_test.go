package pynchy

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

func seedFiles(f *testing.F) [][]byte {
	paths, _ := filepath.Glob("testdata/*")
	var out [][]byte
	for _, p := range paths {
		switch filepath.Ext(p) {
		case ".sse", ".json", ".ndjson":
		default:
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// checkEvents: what the decoder says is valid UTF-8 (it comes from JSON
// strings or bounded excerpts), and a timeline takes it without panicking.
func checkEvents(t *testing.T, evs []events.Event) {
	t.Helper()
	tl := events.NewTimeline()
	for _, ev := range evs {
		for _, s := range []string{ev.Text, ev.Thinking, ev.ID} {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 in %v event: %q", ev.Kind, s)
			}
		}
		if ev.Tool != nil && ev.Tool.Result != nil && !utf8.ValidString(ev.Tool.Result.Text) {
			t.Fatalf("invalid UTF-8 in a tool result: %q", ev.Tool.Result.Text)
		}
		tl.Apply(ev)
	}
	tl.EndOfInput()
}

// FuzzDecode feeds the decoder one record per line: stream events and
// history rows alike.
func FuzzDecode(f *testing.F) {
	for _, b := range seedFiles(f) {
		f.Add(b)
	}
	f.Add([]byte(`{"type": "agent_trace", "trace_type": "text", "text": "🧠 _a_\n🧠 _"}` + "\n" +
		`{"type": "message", "sender_name": "pynchy", "content": "<internal>x", "is_bot": true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder("", "line")
		var evs []events.Event
		for _, line := range bytes.Split(data, []byte("\n")) {
			line = bytes.TrimPrefix(line, []byte("data: "))
			evs = append(evs, d.Decode(line)...)
		}
		evs = append(evs, d.Flush()...)
		checkEvents(t, evs)
	})
}

// FuzzImport runs the whole importer on a file: shape sniffing, chat
// counting, sorting of history rows.
func FuzzImport(f *testing.F) {
	for _, b := range seedFiles(f) {
		f.Add(b)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "in")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ingest.Sniff(path)
		if err != nil {
			t.Fatal(err)
		}
		_ = detect(s)
		var evs []events.Event
		err = importFile(context.Background(), s, ingest.Options{}, func(ev events.Event) { evs = append(evs, ev) })
		_ = err // a usage error or an unreadable document is a fine answer
		checkEvents(t, evs)
	})
}
