package spill

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestPutGet(t *testing.T) {
	f := OpenIn(t.TempDir(), "task-1")
	defer f.Close()
	if f.Err() != nil {
		t.Fatal(f.Err())
	}
	big := strings.Repeat("0123456789", 300_000) // past one flush
	texts := []string{"hello", "", big, "wörld ✓", strings.Repeat("x", 100)}
	offs := make([]int64, len(texts))
	for i, s := range texts {
		off, err := f.Put(s)
		if err != nil {
			t.Fatal(err)
		}
		offs[i] = off
	}
	for i, s := range texts {
		got, err := f.Get(offs[i], len(s))
		if err != nil || got != s {
			t.Fatalf("text %d: got %d bytes, %v; want %d bytes", i, len(got), err, len(s))
		}
		b, err := io.ReadAll(f.Reader(offs[i], len(s)))
		if err != nil || string(b) != s {
			t.Fatalf("reader %d: got %d bytes, %v", i, len(b), err)
		}
		// And into a buffer, from the middle on.
		p := make([]byte, len(s)/2)
		n, err := f.ReadAt(p, offs[i]+int64(len(s)-len(p)))
		if err != nil || string(p[:n]) != s[len(s)-len(p):] {
			t.Fatalf("ReadAt %d: got %d bytes, %v", i, n, err)
		}
	}
}

func TestCloseRemovesTheFile(t *testing.T) {
	f := OpenIn(t.TempDir(), "s")
	f.Put("abc")
	p := f.Path()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file is still there after Close: %v", err)
	}
	if _, err := f.Get(0, 3); !errors.Is(err, ErrGone) {
		t.Fatalf("Get after Close: %v, want ErrGone", err)
	}
}

// A file truncated under a running perch: what it no longer holds is
// reported gone, never a panic or a short text.
func TestTruncatedFile(t *testing.T) {
	f := OpenIn(t.TempDir(), "s")
	defer f.Close()
	a, _ := f.Put("first text")
	b, _ := f.Put(strings.Repeat("y", flushAt))
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(f.Path(), 4); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Get(a, 10); !errors.Is(err, ErrGone) {
		t.Fatalf("Get of a truncated text: %v, want ErrGone", err)
	}
	if _, err := f.Get(b, flushAt); !errors.Is(err, ErrGone) {
		t.Fatalf("Get of a truncated text: %v, want ErrGone", err)
	}
	if _, err := io.ReadAll(f.Reader(a, 10)); !errors.Is(err, ErrGone) {
		t.Fatalf("Reader of a truncated text: %v, want ErrGone", err)
	}
	if _, err := f.ReadAt(make([]byte, 10), a); !errors.Is(err, ErrGone) {
		t.Fatalf("ReadAt of a truncated text: %v, want ErrGone", err)
	}
}

// A file removed under a running perch is still read through the open
// file: the texts stay.
func TestRemovedFileStillReads(t *testing.T) {
	f := OpenIn(t.TempDir(), "s")
	defer f.Close()
	off, _ := f.Put(strings.Repeat("z", flushAt+10))
	f.Flush()
	if err := os.Remove(f.Path()); err != nil {
		t.Fatal(err)
	}
	if got, err := f.Get(off, flushAt+10); err != nil || len(got) != flushAt+10 {
		t.Fatalf("Get after removal: %d bytes, %v", len(got), err)
	}
}

func TestUnwritableDirFails(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("permissions do not stop this user")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	f := OpenIn(dir, "s")
	defer f.Close()
	if f.Err() == nil {
		t.Fatal("a spill file was made in a read-only directory")
	}
	if _, err := f.Put("x"); err == nil {
		t.Fatal("Put succeeded without a file")
	}
}

func TestNotADirFails(t *testing.T) {
	p := filepath.Join(t.TempDir(), "file")
	os.WriteFile(p, nil, 0o600)
	f := OpenIn(filepath.Join(p, "spill"), "s")
	if _, err := f.Put("x"); err == nil {
		t.Fatal("Put succeeded without a file")
	}
	if _, err := f.Get(0, 1); !errors.Is(err, ErrGone) {
		t.Fatalf("Get without a file: %v", err)
	}
	f.Close()
}

// Two perch processes on the same session write separate files, and a
// sweep leaves both alone while they run.
func TestTwoFilesAndSweepKeepsLiveOnes(t *testing.T) {
	dir := t.TempDir()
	a, b := OpenIn(dir, "same"), OpenIn(dir, "same")
	defer a.Close()
	defer b.Close()
	if a.Path() == b.Path() {
		t.Fatalf("one file for two: %s", a.Path())
	}
	a.Put("from a")
	b.Put("from b")
	Sweep(dir)
	for _, f := range []*File{a, b} {
		if _, err := os.Stat(f.Path()); err != nil {
			t.Fatalf("a sweep removed a file in use: %v", err)
		}
	}
	if s, _ := a.Get(0, 6); s != "from a" {
		t.Fatalf("a reads %q", s)
	}
	if s, _ := b.Get(0, 6); s != "from b" {
		t.Fatalf("b reads %q", s)
	}
}

// A file left by a process that died is removed at the next start.
func TestSweepRemovesDeadProcessFiles(t *testing.T) {
	if !lockable() {
		t.Skip("no flock here: nothing is swept")
	}
	if os.Getenv("SPILL_CHILD_DIR") != "" {
		f := OpenIn(os.Getenv("SPILL_CHILD_DIR"), "crash")
		f.Put("left behind")
		f.Flush()
		os.Exit(0) // no Close: as a crash would (and before a TempDir of its own, which it would leave behind)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSweepRemovesDeadProcessFiles$")
	cmd.Env = append(os.Environ(), "SPILL_CHILD_DIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"+suffix))
	if len(left) != 1 {
		t.Fatalf("the dead process left %d files, want 1", len(left))
	}
	other := filepath.Join(dir, "notes.txt")
	os.WriteFile(other, []byte("mine"), 0o600)
	f := OpenIn(dir, "next")
	defer f.Close()
	if _, err := os.Stat(left[0]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the dead process's file is still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("a sweep removed a file that is not a spill file: %v", err)
	}
}
