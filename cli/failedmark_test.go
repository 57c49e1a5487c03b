package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFailedCommandMarkedFailed: a command that ran and exited non-zero
// is marked failed by tail, export --format md and replay (text and md)
// alike, as the terminal UI marks it (events.ToolOutcome), never
// "✓ … [ok, exit 1]"; a tool that itself failed stays an error.
func TestFailedCommandMarkedFailed(t *testing.T) {
	t.Parallel()
	d, base := heldFake(t, "head")
	id, _ := conversation(t, d, base, "failing")

	const failedLine = "✗ execute_command make build  [failed, exit 1]"
	const errorLine = "⊗ read_file src/parser.go  [error]"
	const failedMD = "**Tool `execute_command`** (failed, exit 1): `make build`"
	const errorMD = "**Tool `read_file`** (error): `src/parser.go`"
	check := func(name, out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, out)
			}
		}
		for _, bad := range []string{"[ok, exit 1]", "(ok, exit 1)", "✓ execute_command make build"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s says the failed command worked (%q):\n%s", name, bad, out)
			}
		}
	}

	tail := must(t, run(t, "", "tail", id, "--until-idle", "--url", base)).stdout
	check("tail", tail, failedLine, errorLine)
	md := must(t, run(t, "", "export", id, "--format", "md", "--url", base)).stdout
	check("export md", md, failedMD, errorMD)

	rec := filepath.Join(t.TempDir(), "failing.sse")
	must(t, run(t, "", "record", id, "-o", rec, "--until-idle", "--url", base))
	check("replay", must(t, run(t, "", "replay", rec)).stdout, failedLine, errorLine)
	check("replay md", must(t, run(t, "", "replay", rec, "--format", "md")).stdout, failedMD, errorMD)
}
