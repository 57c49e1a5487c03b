package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/fakedaemon"
)

// TestExportLongSessionSameAsReplay: the export of a long session is byte
// for byte the replay of the same stream read from a file, on a session
// with a large output and a long line.
func TestExportLongSessionSameAsReplay(t *testing.T) {
	info, url := longSessionDaemon(t, 11, fakedaemon.LongSession{Events: 400, BigOutput: 3 << 20, LongLine: 200 << 10})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// The stream as the daemon sends it (it stays open: read its bytes).
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/task/"+info.TaskID+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	stream := make([]byte, info.Bytes)
	_, err = io.ReadFull(resp.Body, stream)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("read the stream: %v", err)
	}
	file := filepath.Join(t.TempDir(), "long.sse")
	if err := os.WriteFile(file, stream, 0o644); err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) string {
		var out, errb strings.Builder
		env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Getenv: func(string) string { return "" }, Home: t.TempDir(), Cwd: t.TempDir()}
		if code := Main(ctx, env, args); code != 0 {
			t.Fatalf("%s: exit %d: %s", args[0], code, errb.String())
		}
		return out.String()
	}
	want := run("replay", file, "--format", "jsonl")
	if !strings.Contains(want, fakedaemon.LongSessionMarker) {
		t.Fatalf("the replay lacks the final reply:\n%.500s", want)
	}
	if got := run("export", info.TaskID, "--url", url, "--format", "jsonl"); got != want {
		t.Fatalf("export differs from the replay of its stream (%d bytes, want %d)", len(got), len(want))
	}
}

// longSessionDaemon serves a long session of the fake daemon (seeded) on
// loopback until the test ends, and returns it and the daemon's URL.
func longSessionDaemon(tb testing.TB, seed int64, ls fakedaemon.LongSession) (fakedaemon.LongSessionInfo, string) {
	tb.Helper()
	d := fakedaemon.New(fakedaemon.Options{Seed: seed})
	info, err := d.AddLongSession(ls)
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := d.Start("127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	return info, srv.URL
}
