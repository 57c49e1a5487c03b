package cli

import (
	"strings"
	"testing"
)

// A [keys] remap onto a key another action uses in the same place is
// refused at start, naming both actions.
func TestKeyRemapConflictRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, want string }{
		{"[keys]\nhold = \"ctrl+x\"\n", `[keys]: "ctrl+x" would be both hold and cancel_run (composer)`},
		{"[keys]\nheld_adopt = [\"m\", \"d\"]\n", `[keys]: "d" would be both held_adopt and held_delete (held messages)`},
	} {
		c := newConfigEnv(t, tc.text)
		r := c.run(t, "tasks")
		if r.code != ExitFailure || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %q", tc.text, r.code, r.stderr, tc.want)
		}
	}
	// A key used elsewhere (another screen) is no conflict.
	c := newConfigEnv(t, "[keys]\nhold = \"ctrl+b\"\ncancel_run = \"ctrl+k\"\n")
	if r := c.run(t, "config", "path"); r.code != 0 {
		t.Errorf("a valid remap: %+v", r)
	}
}
