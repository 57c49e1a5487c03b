package registry

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/perch-tui/perch/client"
)

// Local CLIs: the agent CLIs that keep their sessions in files on this
// machine (Claude Code, Codex) are sources of their own, on by default.
// A system with a local CLI sets System.Local (how to open the sessions
// under a directory) and System.LocalDir (where that directory is).

// LocalDir says where a local CLI keeps its sessions: Env names the
// variable that sets the directory (the CLI's own), Home the directory
// under the user's home otherwise.
type LocalDir struct {
	Env  string // e.g. CLAUDE_CONFIG_DIR
	Home string // e.g. .claude
}

// Resolve is the directory for this environment and home ("" when
// neither gives one).
func (d LocalDir) Resolve(getenv func(string) string, home string) string {
	if d.Env != "" && getenv != nil {
		if v := strings.TrimSpace(getenv(d.Env)); v != "" {
			return expandHome(v, home)
		}
	}
	if home == "" || d.Home == "" {
		return ""
	}
	return filepath.Join(home, d.Home)
}

// expandHome expands a leading ~/ (a config file's path).
func expandHome(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	return p
}

// LocalSetting is what the user set for one local CLI (the config file's
// [local.<system>] table).
type LocalSetting struct {
	Off bool   // not watched
	Dir string // its directory ("" for the default); ~/ is the home
}

// LocalSource is one local CLI whose sessions perch watches.
type LocalSource struct {
	System string
	Dir    string
	// Open opens its sessions as a backend.
	Open func() (client.Backend, error)
}

// LocalNames lists the systems with a local CLI.
func (r *Registry) LocalNames() []string {
	var out []string
	for _, s := range r.Systems {
		if s.Local != nil {
			out = append(out, s.Name)
		}
	}
	return out
}

// LocalSources lists the local CLIs to watch, in the registry's order:
// each system with one, unless set off, whose directory exists. The
// directory is the environment's (the CLI's own variable), else the
// setting's, else the default under home.
func (r *Registry) LocalSources(getenv func(string) string, home string, set map[string]LocalSetting) []LocalSource {
	var out []LocalSource
	for _, s := range r.Systems {
		if s.Local == nil {
			continue
		}
		st := set[s.Name]
		if st.Off {
			continue
		}
		dir := LocalDir{Env: s.LocalDir.Env}.Resolve(getenv, home)
		if dir == "" && st.Dir != "" {
			dir = expandHome(st.Dir, home)
		}
		if dir == "" {
			dir = s.LocalDir.Resolve(nil, home)
		}
		if dir == "" {
			continue
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue // the CLI never ran here
		}
		open := s.Local
		out = append(out, LocalSource{System: s.Name, Dir: dir, Open: func() (client.Backend, error) { return open(dir) }})
	}
	return out
}
