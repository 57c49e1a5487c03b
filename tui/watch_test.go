package tui

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWatchFileSignalsChanges: a write, a replacing rename and a removal of
// the watched file each signal; a sibling file does not; the channel closes
// when the context ends.
func TestWatchFileSignalsChanges(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "outbox") // created by watchFile
	path := filepath.Join(dir, "task.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, ok := watchFile(ctx, path)
	if !ok {
		t.Skip("no file notifications on this platform")
	}
	wait := func(what string) {
		t.Helper()
		select {
		case _, open := <-ch:
			if !open {
				t.Fatalf("%s: channel closed", what)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no signal", what)
		}
	}
	drain := func() {
		for {
			select {
			case <-ch:
			case <-time.After(50 * time.Millisecond):
				return
			}
		}
	}
	if err := os.WriteFile(path, []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wait("write")
	drain()
	tmp := filepath.Join(dir, "task.jsonl.tmp")
	if err := os.WriteFile(tmp, []byte("b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	drain() // the temporary file is a sibling: nothing to report
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	wait("rename")
	drain()
	if err := os.WriteFile(filepath.Join(dir, "other.jsonl"), []byte("c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("a sibling file signalled")
	case <-time.After(200 * time.Millisecond):
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	wait("remove")
	cancel()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, open := <-ch:
			if !open {
				return
			}
		case <-deadline:
			t.Fatal("channel still open after cancel")
		}
	}
}
