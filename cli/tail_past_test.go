package cli

import (
	"strings"
	"testing"

	"github.com/perch-tui/perch/fakedaemon"
)

// tail prints a finished session's tools once each, with their outcome:
// not "[running]" and then "[ok]" for what was over before tail started.
func TestTailPrintsEachPastToolOnce(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{"head", "docs"} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			d, base := fake(t, fakedaemon.Dialect(dialect), fastSpeed)
			id, err := d.SeedDemo()
			if err != nil {
				t.Fatal(err)
			}
			waitIdle(t, base, id)
			out := must(t, run(t, "", "tail", id, "--until-idle", "--url", base)).stdout
			if strings.Contains(out, "[running]") {
				t.Errorf("a past tool is printed running:\n%s", out)
			}
			// Each once, with the mark the terminal UI shows for its
			// outcome (styles.OutcomeIcon): ⊗ a tool that failed, ✗ a
			// command that exited non-zero.
			for _, tool := range []string{"✓ list_files .  [ok]", "✓ read_file README.md  [ok]", "✓ execute_command go test ./...  [ok",
				"✗ execute_command make build  [failed, exit 1]", "⊗ read_file src/parser.go  [error]"} {
				if n := strings.Count(out, tool); n != 1 {
					t.Errorf("%q printed %d times:\n%s", tool, n, out)
				}
			}
		})
	}
}
