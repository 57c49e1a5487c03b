package suna

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// checkUTF8 fails on text of the timeline that is not valid UTF-8.
func checkUTF8(t *testing.T, tl *events.Timeline) {
	t.Helper()
	for _, it := range tl.Items() {
		ok := utf8.ValidString(it.Text) && utf8.ValidString(it.Thinking) && utf8.ValidString(it.ID)
		if it.Tool != nil {
			ok = ok && utf8.ValidString(it.Tool.Name) && utf8.ValidString(it.Tool.CallID)
			if it.Tool.Result != nil {
				ok = ok && utf8.ValidString(it.Tool.Result.Text) && utf8.ValidString(it.Tool.Result.ErrorText)
			}
		}
		if !ok {
			t.Fatalf("invalid UTF-8 in %+v", it)
		}
	}
}

// FuzzDecode feeds the lines of the input as stream frames, to a file
// decoder and a live one.
func FuzzDecode(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.sse")
	for _, p := range paths {
		var frames [][]byte
		_ = ingest.EachFrame(p, func(fr events.Frame) error {
			frames = append(frames, fr.Data)
			return nil
		})
		// Small corpus entries keep the fuzzer fast: runs of a few frames.
		for i := 0; i < len(frames); i += 6 {
			run := frames[i:min(i+6, len(frames))]
			f.Add(bytes.Join(run, []byte("\n")), i%12 == 0)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, deltas bool) {
		d := NewDecoder()
		d.Deltas = deltas
		tl := events.NewTimeline()
		for _, line := range bytes.Split(data, []byte("\n")) {
			for _, ev := range d.Decode(line) {
				tl.Apply(ev)
			}
		}
		for _, ev := range d.Flush() {
			tl.Apply(ev)
		}
		tl.EndOfInput()
		checkUTF8(t, tl)
	})
}

// FuzzHistory reads the input as a history document, sorted and decoded.
func FuzzHistory(f *testing.F) {
	paths, _ := filepath.Glob("testdata/history_*.json")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var doc struct{ Messages []json.RawMessage }
		if json.Unmarshal(ingest.Repair(data), &doc) != nil {
			return
		}
		var h history
		for i, r := range doc.Messages {
			h.add("message "+string(rune('a'+i%26)), r)
		}
		tl := events.NewTimeline()
		h.decode(t.Context(), NewDecoder(), func(evs []events.Event) {
			for _, ev := range evs {
				tl.Apply(ev)
			}
		})
		tl.EndOfInput()
		checkUTF8(t, tl)
	})
}

// FuzzXML: the legacy tool-call parser on any text.
func FuzzXML(f *testing.F) {
	f.Add(`I'll look.<function_calls><invoke name="web-search"><parameter name="query">x</parameter></invoke></function_calls>`)
	f.Add(`<FUNCTION_CALLS><invoke name='a'><parameter name='j'>{"a": [1]}</parameter></invoke></FUNCTION_CALLS>`)
	f.Add(`<function_calls><invoke name="a">`)
	f.Fuzz(func(t *testing.T, s string) {
		calls, text, ok := parseXMLCalls(s)
		if !ok && text != s {
			t.Fatal("text changed though nothing parsed")
		}
		for _, c := range calls {
			if !json.Valid(c.args) {
				t.Fatalf("invalid args %q", c.args)
			}
		}
	})
}
