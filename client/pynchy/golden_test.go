package pynchy_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixtures are the input files of testdata and the --chat each needs.
var fixtures = map[string]string{
	"history_basic.json":    "",
	"history_unsorted.json": "",
	"history_hostile.json":  "",
	"history_chats.json":    "slack:C9",
	"stream_basic.sse":      "",
	"stream_multichat.sse":  "tg:100",
	"stream_hostile.sse":    "",
	"stream_truncated.sse":  "",
	"events.ndjson":         "",
}

func run(t *testing.T, path, from string, opts ingest.Options) []byte {
	t.Helper()
	res, err := registry.Run(context.Background(), path, from, opts)
	if err != nil {
		t.Fatalf("import %s (from %q): %v", path, from, err)
	}
	if res.Kind != "pynchy" {
		t.Fatalf("import %s (from %q): kind %q", path, from, res.Kind)
	}
	var b bytes.Buffer
	if err := transcript.WriteJSONL(&b, res.Timeline); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGolden: every fixture's `perch import --format jsonl` output, with
// --from pynchy and detected, is its golden file.
func TestGolden(t *testing.T) {
	t.Parallel()
	inputs, _ := filepath.Glob("testdata/*")
	seen := 0
	for _, in := range inputs {
		name := filepath.Base(in)
		chat, ok := fixtures[name]
		if !ok {
			continue
		}
		seen++
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts := ingest.Options{Chat: chat}
			got := run(t, in, "pynchy", opts)
			if detected := run(t, in, "", opts); !bytes.Equal(got, detected) {
				t.Errorf("detected import differs from --from pynchy:\n%s\nvs\n%s", detected, got)
			}
			golden := strings.TrimSuffix(in, filepath.Ext(in)) + ".jsonl"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("missing golden (go test -update): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", in, golden, got, want)
			}
		})
	}
	if seen != len(fixtures) {
		t.Fatalf("found %d of %d fixtures", seen, len(fixtures))
	}
}

// TestSeveralChats: a file of several chats needs --chat, and the usage
// error lists them with their counts; an unknown --chat is refused too.
func TestSeveralChats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, chat string
		want       []string
	}{
		{"stream_multichat.sse", "", []string{"2 chats", "--chat", "tg:100  (5 events)", "slack:C9  (5 events)"}},
		{"history_chats.json", "", []string{"2 chats", "tg:100  (3 messages)", "slack:C9  (2 messages)"}},
		{"stream_multichat.sse", "wa:nobody", []string{`no events of chat "wa:nobody"`, "tg:100", "slack:C9"}},
	} {
		_, err := registry.Run(context.Background(), filepath.Join("testdata", tc.file), "pynchy", ingest.Options{Chat: tc.chat})
		var ue *ingest.UsageError
		if !errors.As(err, &ue) {
			t.Fatalf("%s --chat %q: err %v, want a usage error", tc.file, tc.chat, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(ue.Msg, w) {
				t.Errorf("%s --chat %q: %q lacks %q", tc.file, tc.chat, ue.Msg, w)
			}
		}
	}
}
