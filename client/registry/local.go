package registry

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/internal/pricing"
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

// LocalState is where a local CLI's sessions are looked for, and why.
type LocalState struct {
	System string
	Dir    string // "" when nothing gives one (no home)
	// From says where Dir comes from: the CLI's variable ("CLAUDE_CONFIG_DIR"),
	// "config file", or "default".
	From   string
	Off    bool // the config file turns it off
	Exists bool // Dir is a directory
	open   func(dir string) (client.Backend, error)
}

// LocalStates resolves every local CLI's directory: the environment's
// (the CLI's own variable), else the setting's, else the default under
// home.
func (r *Registry) LocalStates(getenv func(string) string, home string, set map[string]LocalSetting) []LocalState {
	var out []LocalState
	for _, s := range r.Systems {
		if s.Local == nil {
			continue
		}
		st := LocalState{System: s.Name, Off: set[s.Name].Off, open: s.Local}
		switch {
		case LocalDir{Env: s.LocalDir.Env}.Resolve(getenv, home) != "":
			st.Dir, st.From = LocalDir{Env: s.LocalDir.Env}.Resolve(getenv, home), s.LocalDir.Env
		case set[s.Name].Dir != "":
			st.Dir, st.From = expandHome(set[s.Name].Dir, home), "config file"
		default:
			st.Dir, st.From = s.LocalDir.Resolve(nil, home), "default"
		}
		if st.Dir != "" {
			fi, err := os.Stat(st.Dir)
			st.Exists = err == nil && fi.IsDir()
		}
		out = append(out, st)
	}
	return out
}

// LocalSources lists the local CLIs to watch, in the registry's order:
// each system with one (LocalStates), unless set off, whose directory
// exists (a CLI that never ran here is no source). state is perch's
// state directory ("" for none): a backend that keeps what it computed of
// the sessions (TotalsKeeper) keeps it there, one file per directory.
// prices is the price table a backend that prices its sessions (Priced)
// uses: the embedded one with the config file's [prices].
func (r *Registry) LocalSources(getenv func(string) string, home string, set map[string]LocalSetting, state string, prices pricing.Prices) []LocalSource {
	var out []LocalSource
	for _, st := range r.LocalStates(getenv, home, set) {
		if st.Off || !st.Exists {
			continue
		}
		open, dir, system := st.open, st.Dir, st.System
		out = append(out, LocalSource{System: system, Dir: dir, Open: func() (client.Backend, error) {
			b, err := open(dir)
			if err != nil {
				return nil, err
			}
			if p, ok := b.(Priced); ok {
				p.UsePrices(prices)
			}
			if k, ok := b.(TotalsKeeper); ok && state != "" {
				sum := sha256.Sum256([]byte(dir))
				k.KeepTotals(filepath.Join(state, "local", fmt.Sprintf("%s-%x.json", system, sum[:6])))
			}
			return b, nil
		}})
	}
	return out
}

// TotalsKeeper is a local backend that keeps its sessions' totals (whole
// transcripts counted) in a file, so that the next start has them.
type TotalsKeeper interface {
	KeepTotals(path string)
}

// Priced is a local backend that prices its sessions (events.Task.Cost).
type Priced interface {
	UsePrices(pricing.Prices)
}
