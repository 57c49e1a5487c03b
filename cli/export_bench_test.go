package cli

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/perch-tui/perch/fakedaemon"
)

// BenchmarkExportLongSession: `perch export --format jsonl` of the fake
// daemon's long session (2,000 events, about 10 MB), in process, over
// loopback: the reader, the decoder, the timeline and the writer, and
// the end of the replay (a short quiet window: the task is idle and the
// log ends a run). go test ./cli -run '^$' -bench ExportLongSession
// -cpuprofile cpu.out profiles the whole path.
func BenchmarkExportLongSession(b *testing.B) {
	info, url := longSessionDaemon(b, 7, fakedaemon.LongSession{Events: 2000})
	b.SetBytes(info.Bytes)
	for b.Loop() {
		var errb strings.Builder
		env := Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errb,
			Getenv: func(string) string { return "" }, Home: b.TempDir(), Cwd: b.TempDir()}
		if code := Main(context.Background(), env, []string{"export", info.TaskID, "--url", url, "--format", "jsonl"}); code != 0 {
			b.Fatalf("export: exit %d: %s", code, errb.String())
		}
	}
}
