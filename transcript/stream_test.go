package transcript

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// TestCorpusStreamedIsIdentical: an export written while the stream is
// read — each item once the timeline settled it, which the timeline then
// forgets — is byte for byte the export of the whole timeline, in every
// format, for every stream of the corpus. And it does let items go before
// the end: that is what keeps a day-long export's memory flat.
func TestCorpusStreamedIsIdentical(t *testing.T) {
	files, _ := filepath.Glob("../client/maria/testdata/streams/*.sse")
	if len(files) == 0 {
		t.Fatal("no corpus")
	}
	early := 0
	for _, path := range files {
		base := strings.TrimSuffix(filepath.Base(path), ".sse")
		for _, format := range []string{"jsonl", "json", "md"} {
			var whole, streamed bytes.Buffer
			if err := writeWhole(&whole, replay(t, path), format, base); err != nil {
				t.Fatal(err)
			}
			released := streamExport(t, path, NewWriter(&streamed, format, base, MarkdownOptions{}))
			if format == "jsonl" {
				early += released
			}
			if !bytes.Equal(whole.Bytes(), streamed.Bytes()) {
				t.Errorf("%s, %s: the streamed export differs:\n--- streamed\n%s\n--- whole\n%s", base, format, streamed.Bytes(), whole.Bytes())
			}
		}
	}
	if early == 0 {
		t.Error("no stream of the corpus let an item go before its end")
	}
}

// writeWhole writes a whole timeline through NewWriter.
func writeWhole(b *bytes.Buffer, tl *events.Timeline, format, title string) error {
	return writeAll(NewWriter(b, format, title, MarkdownOptions{}), tl)
}

// streamExport replays path, writing each settled item to w after every
// event and releasing it, then the rest; it returns how many items were
// released before the end.
func streamExport(t *testing.T, path string, w Writer) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tl := events.NewTimeline()
	dec := maria.NewDecoder()
	if err := sse.ReadFrames(bytes.NewReader(data), func(fr events.Frame) error {
		for _, ev := range dec.Decode(fr) {
			tl.Apply(ev)
			n := tl.Settled()
			for _, it := range tl.Items()[:n] {
				if err := w.Item(it); err != nil {
					return err
				}
			}
			tl.Release(n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	released := tl.Released()
	if err := writeAll(w, tl); err != nil {
		t.Fatal(err)
	}
	return released
}

// TestJSONOfNoItems: the streamed JSON document of an empty timeline is
// what encoding/json writes for it.
func TestJSONOfNoItems(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, events.NewTimeline()); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"items\": [],\n  \"state\": {\n    \"type\": \"state\",\n    \"status\": \"idle\",\n    \"queue\": [],\n    \"todos\": []\n  }\n}\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
