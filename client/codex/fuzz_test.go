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
	"github.com/perch-tui/perch/internal/tally"
)

// FuzzDecode feeds any bytes to the decoder line by line, and to
// detection: nothing may panic, and every string it emits must be valid
// UTF-8.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json*")
	rollouts, _ := filepath.Glob("testdata/cli/*.rollout.jsonl")
	for _, p := range append(files, rollouts...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"id":"0","msg":{"type":"exec_command_output_delta","call_id":"c","chunk":"/w=="}}`))
	f.Add([]byte(`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"a"},{"type":"input_image"}]}}`))
	f.Add([]byte(`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":-1}}}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		_ = detect(ingest.SniffBytes("x", in, true))
		d := NewDecoder()
		d.Live = len(in)%2 == 1 // the live decoder (Follow) too
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

// FuzzScan feeds any file to the list's head and tail reads: nothing may
// panic, whatever the lines and wherever they break.
func FuzzScan(f *testing.F) {
	rollouts, _ := filepath.Glob("testdata/cli/*.rollout.jsonl")
	for _, p := range rollouts {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("{\"type\":\"event_msg\",\"payload\":{\"type\":\"task_started\"}}"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		p := filepath.Join(dir, "rollout-x.jsonl")
		if err := os.WriteFile(p, in, 0o644); err != nil {
			t.Fatal(err)
		}
		h, _ := readHead(p)
		if !utf8.ValidString(h.title) && utf8.Valid(in) {
			t.Fatalf("title %q", h.title)
		}
		_, _ = readTail(p, int64(len(in)))
		_, _ = tally.New(countLine).Count(p)
	})
}
