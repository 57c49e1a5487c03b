//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A named pipe (what /dev/stdin or <(…) is when fed by a pipe) is read as
// a stream: detection's sample is not lost to the import.
func TestImportNamedPipe(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "client", "maria", "testdata", "recorded.sse")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := must(t, run(t, "", "import", path)).stdout
	fifo := filepath.Join(t.TempDir(), "in")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(raw)
		f.Close()
	}()
	if got := must(t, run(t, "", "import", fifo)).stdout; got != want || got == "" {
		t.Errorf("import of a named pipe prints:\n%s\nwant:\n%s", got, want)
	}
}
