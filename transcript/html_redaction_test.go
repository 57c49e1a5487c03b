package transcript

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/transcript/redact"
)

// TestRedactionChangesNothingElse: a session without secrets exports the
// same bytes, in every format, through the redactor as without it: the
// redacted copies keep everything the exports show.
func TestRedactionChangesNothingElse(t *testing.T) {
	files, _ := filepath.Glob("../client/maria/testdata/streams/*.sse")
	if len(files) < 15 {
		t.Fatalf("corpus has %d files", len(files))
	}
	for _, path := range files {
		base := strings.TrimSuffix(filepath.Base(path), ".sse")
		for _, format := range []string{"jsonl", "json", "md", "html"} {
			var plain, red bytes.Buffer
			newW := func(buf *bytes.Buffer) Writer {
				if format == "html" {
					return NewHTMLWriter(buf, HTMLOptions{Title: base})
				}
				return NewWriter(buf, format, base, MarkdownOptions{})
			}
			if err := writeAll(newW(&plain), replay(t, path)); err != nil {
				t.Fatal(err)
			}
			r, err := redact.New(redact.Options{Home: "/home/nobody-here", User: "nobody-here"})
			if err != nil {
				t.Fatal(err)
			}
			if err := writeAll(redact.NewWriter(newW(&red), r), replay(t, path)); err != nil {
				t.Fatal(err)
			}
			if c := r.Counts(); len(c) > 0 {
				t.Errorf("%s: redacted %v", base, c)
				continue
			}
			if !bytes.Equal(plain.Bytes(), red.Bytes()) {
				t.Errorf("%s --format %s: redaction that found nothing changed the export:\n%s\nvs\n%s", base, format, red.Bytes(), plain.Bytes())
			}
		}
	}
}
