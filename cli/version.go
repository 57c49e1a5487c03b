package cli

import (
	"runtime/debug"
	"strings"
)

// Version is set at build time with -ldflags "-X …cli.Version=…"; when
// it is not, the module's version (go install …@v1.2.3) stands in.
var Version = "dev"

// versionLine is what perch --version prints: the version and the commit
// the binary was built from, as the Go toolchain recorded them
// (vcs.revision and vcs.modified, present when built in a git checkout).
func versionLine(info *debug.BuildInfo, ok bool) string {
	v := Version
	if v == "dev" && ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	var rev, modified string
	if ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	var b strings.Builder
	b.WriteString("perch " + v)
	switch {
	case rev != "":
		b.WriteString(" (commit " + rev[:min(len(rev), 12)])
		if modified == "true" {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteString(")")
	case v == "dev":
		b.WriteString(" (commit unknown: built without version control information)")
	}
	if ok && info.GoVersion != "" {
		b.WriteString(", " + info.GoVersion)
	}
	return b.String()
}

// versionText is versionLine of the running binary.
func versionText() string {
	info, ok := debug.ReadBuildInfo()
	return versionLine(info, ok)
}
