package cli

import (
	"strings"
	"testing"
)

// TestNoDaemonSuggestsDemo: with no daemon found (no URL, no
// daemon.json) or none listening where perch looked, perch says how to
// point it at one (--url) and suggests perch demo, which needs none.
func TestNoDaemonSuggestsDemo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"tasks"}, {"tasks", "--url", "http://127.0.0.1:1/v1"}} {
		r := run(t, "", args...)
		if r.code != ExitFailure || !strings.Contains(r.stderr, "--url") || !strings.Contains(r.stderr, "perch demo") {
			t.Errorf("perch %s: exit %d, stderr:\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}
