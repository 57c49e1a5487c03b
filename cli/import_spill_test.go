package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/gentranscript"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

// TestImportSpillSameOutput: perch import keeps a file's long texts in a
// spill file, writes items as they settle, and prints, in every format,
// byte for byte what it prints from a timeline that keeps them all in
// memory, for a file of each kind.
func TestImportSpillSameOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	for _, g := range gentranscript.All() {
		p := filepath.Join(dir, g.Name)
		if err := g.Write(p, 128<<10); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		tl, sp, err := importFile(ctx, Env{Stderr: &stderr}, p, "", ingest.Options{})
		if err != nil {
			t.Fatalf("%s: %v", g.Name, err)
		}
		mem, err := registry.Run(ctx, p, "", ingest.Options{})
		if err != nil {
			sp.Close()
			t.Fatalf("%s: %v", g.Name, err)
		}
		if n := spilled(tl); n == 0 {
			t.Errorf("%s: no text was kept in the spill file", g.Name)
		}
		for _, format := range []string{"jsonl", "json", "md"} {
			var got, want bytes.Buffer
			md := transcript.MarkdownOptions{Full: true}
			if err := writeExport(&got, tl, format, g.Name, md); err != nil {
				t.Fatalf("%s %s: %v", g.Name, format, err)
			}
			if err := writeExport(&want, mem.Timeline, format, g.Name, md); err != nil {
				t.Fatalf("%s %s: %v", g.Name, format, err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s --format %s: the output with a spill file differs from the one without (%d and %d bytes)", g.Name, format, got.Len(), want.Len())
			}
			// And written as it is read, each settled item let go.
			var streamed bytes.Buffer
			if err := importTo(ctx, Env{Stderr: &stderr}, p, "", ingest.Options{}, transcript.NewWriter(&streamed, format, g.Name, md)); err != nil {
				t.Fatalf("%s %s: %v", g.Name, format, err)
			}
			if !bytes.Equal(streamed.Bytes(), want.Bytes()) {
				t.Errorf("%s --format %s: the import written as it is read differs from the whole one (%d and %d bytes)", g.Name, format, streamed.Len(), want.Len())
			}
		}
		if stderr.Len() > 0 {
			t.Errorf("%s: stderr %q", g.Name, stderr.String())
		}
		sp.Close()
	}
}

// spilled counts the items whose text or output is in the store, not in
// memory.
func spilled(tl *events.Timeline) int {
	n := 0
	for _, it := range tl.Items() {
		if it.HasBody() && it.Text == "" {
			n++
		}
		if it.Kind == events.ItemTool && it.Tool.Result != nil && it.Tool.Result.Text == "" {
			if r, err := it.Tool.LoadOutput(); err == nil && r != nil && r.Text != "" {
				n++
			}
		}
	}
	return n
}
