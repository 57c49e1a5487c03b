package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

// perch --version names the commit the binary was built from, and the
// module version of a go install.
func TestVersionLine(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123", "false")},
			true, "perch dev (commit 0123456789ab), go1.26.0"},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123", "true")},
			true, "perch dev (commit 0123456789ab, with uncommitted changes), go1.26.0"},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.4.1"}},
			true, "perch v0.4.1, go1.26.0"},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}},
			true, "perch dev (commit unknown: built without version control information), go1.26.0"},
		{nil, false, "perch dev (commit unknown: built without version control information)"},
	} {
		if got := versionLine(tc.info, tc.ok); got != tc.want {
			t.Errorf("versionLine = %q, want %q", got, tc.want)
		}
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := must(t, run(t, "", args...))
		if !strings.HasPrefix(r.stdout, "perch ") || !strings.Contains(r.stdout, "go1.") || strings.Count(r.stdout, "\n") != 1 {
			t.Errorf("%v: %q", args, r.stdout)
		}
	}
}
