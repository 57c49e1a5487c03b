package cli

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/fakedaemon"
)

// demoOnOnePort starts, at each call, a fake daemon with the given seed on
// the same loopback address, its demo task seeded with prompt ("" for the
// demo's own): a restart that reuses the task ids. A port just let go may
// be another test's connection's own end for a moment, so the bind is
// tried again until it is free.
func demoOnOnePort(t *testing.T, seed int64) func(prompt string) (*fakedaemon.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return func(prompt string) (*fakedaemon.Server, string) {
		t.Helper()
		d := fakedaemon.New(fakedaemon.Options{Speed: fastSpeed, Seed: seed})
		id, err := d.SeedDemoPrompt(prompt)
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			srv, err := d.Start(addr)
			if err == nil {
				return srv, id
			}
			if time.Now().After(deadline) {
				t.Fatalf("the daemon's port is not free again: %v", err)
			}
		}
	}
}

// perch tail follows a task; the daemon restarts and gives the task's id
// to a new task. tail says the session was replaced and prints the new
// one from its start, never the new run's texts after the old history.
func TestTailOfAReplacedSession(t *testing.T) {
	t.Parallel()
	start := demoOnOnePort(t, 3)
	srv, id := start("")
	base := srv.URL
	waitIdle(t, base, id)

	var out, errb lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Home: t.TempDir(), Cwd: t.TempDir(),
		Getenv: func(string) string { return "" }}
	go func() { done <- Main(ctx, env, []string{"tail", id, "--url", base}) }()
	defer func() { cancel(); <-done }()
	waitText := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok(out.String()) {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s; stdout:\n%s\nstderr:\n%s", what, out.String(), errb.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		return out.String()
	}
	waitText("the old task's run", func(s string) bool {
		return strings.Contains(s, "── run ended") || strings.Contains(s, "show me the diff")
	})
	time.Sleep(50 * time.Millisecond) // the creation times are milliseconds
	srv.Close()
	srv2, id2 := start("Only say hello.")
	defer srv2.Close()
	if id2 != id {
		t.Skipf("another id after the restart (%s, not %s)", id2, id)
	}
	s := waitText("the replaced notice and the new task", func(s string) bool {
		i := strings.Index(s, "was replaced")
		return i >= 0 && strings.Contains(s[i:], "Only say hello.") && strings.Contains(s[i:], "── run ended")
	})
	after := s[strings.Index(s, "was replaced"):]
	if strings.Contains(after, "plan the fix") || strings.Contains(after, "list_files") {
		t.Errorf("the old task is in what follows the notice:\n%s", after)
	}
}

// perch record of a task that is replaced under its id stops, saying so:
// one file never holds two tasks.
func TestRecordOfAReplacedSessionStops(t *testing.T) {
	t.Parallel()
	start := demoOnOnePort(t, 4)
	srv, id := start("")
	base := srv.URL
	waitIdle(t, base, id)
	file := filepath.Join(t.TempDir(), "r.sse")
	var errb lockedBuffer
	done := make(chan int, 1)
	env := Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errb, Home: t.TempDir(), Cwd: t.TempDir(),
		Getenv: func(string) string { return "" }}
	go func() { done <- Main(context.Background(), env, []string{"record", id, "-o", file, "--url", base}) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if fi, err := os.Stat(file); err == nil && fi.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing recorded: %s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the replay written; creation times are milliseconds
	srv.Close()
	srv2, id2 := start("Only say hello.")
	defer srv2.Close()
	if id2 != id {
		t.Skipf("another id after the restart (%s, not %s)", id2, id)
	}
	select {
	case code := <-done:
		if code == 0 || !strings.Contains(errb.String(), "the task was replaced by a new one under the same id") {
			t.Errorf("record exited %d: %s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("record went on after the replacement: %s", errb.String())
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "Only say hello.") {
		t.Errorf("the new task's frames were recorded after the old one's")
	}
}
