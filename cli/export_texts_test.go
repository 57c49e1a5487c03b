package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/fakedaemon"
)

// TestExportOwningTheProcessSameBytes: an export that owns its process
// keeps the replay's texts in memory of their own (internal/textmem) and
// bounds the heap; its output is byte for byte the output of an export
// that does neither, on a long session with an output too large for that
// memory and a long line.
func TestExportOwningTheProcessSameBytes(t *testing.T) {
	d := fakedaemon.New(fakedaemon.Options{Seed: 11})
	info, err := d.AddLongSession(fakedaemon.LongSession{Events: 400, BigOutput: 3 << 20, LongLine: 200 << 10})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := d.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	export := func(owns bool) string {
		var out, errb strings.Builder
		env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, OwnsProcess: owns,
			Getenv: func(string) string { return "" }, Home: t.TempDir(), Cwd: t.TempDir()}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if code := Main(ctx, env, []string{"export", info.TaskID, "--url", srv.URL, "--format", "jsonl"}); code != 0 {
			t.Fatalf("export (owns the process: %v): exit %d: %s", owns, code, errb.String())
		}
		return out.String()
	}
	plain, owning := export(false), export(true)
	if !strings.Contains(plain, fakedaemon.LongSessionMarker) {
		t.Fatalf("the export lacks the final reply:\n%.500s", plain)
	}
	if owning != plain {
		t.Fatalf("the export that owns the process differs (%d bytes, want %d)", len(owning), len(plain))
	}
}
