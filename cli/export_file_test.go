package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// withForeign is streamA with two frames maria does not send, the second
// one well after the first: the timeline's notice about them, written
// ahead after the first, changes with the second.
func withForeign(t *testing.T) []byte {
	t.Helper()
	log, err := os.ReadFile(streamA)
	if err != nil {
		t.Fatal(err)
	}
	frames := bytes.SplitAfter(log, []byte("\n\n"))
	if len(frames) < 10 {
		t.Fatalf("stream A has %d frames", len(frames))
	}
	foreign := []byte("event: bogus\ndata: {\"x\":1}\n\n")
	var out []byte
	for i, f := range frames {
		out = append(out, f...)
		if i == 2 || i == 7 {
			out = append(out, foreign...)
		}
	}
	return out
}

// fileTarget is a regular file that already holds a line, positioned at
// its end, as a shell's > after another command's output would leave it.
func fileTarget(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.WriteString("before\n"); err != nil {
		t.Fatal(err)
	}
	return f
}

func fileText(t *testing.T, f *os.File) string {
	t.Helper()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExportToAFile: perch export --format jsonl into a regular file, from
// a daemon that pauses after every frame (a notice changes after it was
// first in the timeline), holds what the export to a pipe holds, after
// what the file held before.
func TestExportToAFile(t *testing.T) {
	log := withForeign(t)
	const id = "3f2b0000-0000-4000-8000-0000000000a1"
	var at []int
	for i := 0; ; {
		j := bytes.Index(log[i:], []byte("\n\n"))
		if j < 0 || i+j+2 >= len(log) {
			break
		}
		i += j + 2
		at = append(at, i)
	}
	s := &taskServer{id: id, log: log, pauses: at, pauseFor: 15 * time.Millisecond, status: func() string { return "idle" }}
	base := s.start(t)
	want := must(t, run(t, "", "export", id, "--url", base, "--backend", "maria", "--format", "jsonl")).stdout
	if !strings.Contains(want, "Ignored 2 frames") {
		t.Fatalf("the export does not count both foreign frames:\n%s", want)
	}
	f := fileTarget(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := runEnv(ctx, t, func(e *Env) { e.Stdout = f }, "", "export", id, "--url", base, "--backend", "maria", "--format", "jsonl")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := fileText(t, f); got != "before\n"+want {
		t.Fatalf("file:\n%s\nwant:\nbefore\n%s", got, want)
	}
}
