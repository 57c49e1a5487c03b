package index

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/perch-tui/perch/internal/gentranscript"
)

// BenchmarkIndexFile: the first index of a generated Claude Code file.
func BenchmarkIndexFile(b *testing.B) {
	const size = 32 << 20
	path := filepath.Join(b.TempDir(), "claude.jsonl")
	for _, g := range gentranscript.All() {
		if g.Kind == "claude-code" {
			if err := g.Write(path, size); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.SetBytes(size)
	for b.Loop() {
		ix, err := Open(context.Background(), filepath.Join(b.TempDir(), FileName))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ix.IndexFile(context.Background(), Source{Path: path}, nil); err != nil {
			b.Fatal(err)
		}
		ix.Close()
		os.Remove(ix.File())
	}
}
