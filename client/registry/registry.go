// Package registry is the one table of the agent systems perch reads. For
// each system it knows how to read its transcript files (an importer,
// detected by score) and, for the systems perch follows over HTTP (maria,
// Suna, pynchy), how to probe a URL and open a live backend.
//
// Everything that needs to know which systems exist asks here: `perch
// import` and `perch replay` (Run, Choose, Stream), the live commands
// (Open, Probe, Discover), and help text and errors (Names, LiveNames, KindList).
// Nothing under client/ imports this package; it imports them.
package registry

import (
	"context"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/anthropic"
	"github.com/perch-tui/perch/client/attocode"
	"github.com/perch-tui/perch/client/claudecode"
	"github.com/perch-tui/perch/client/codex"
	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/client/openai"
	"github.com/perch-tui/perch/client/pynchy"
	"github.com/perch-tui/perch/client/suna"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// System is one agent system.
type System struct {
	// Name is what --backend and --from call it.
	Name string
	// Files reads the system's transcript files; its Import is nil for a
	// system perch only follows live (tests' stand-ins).
	Files ingest.Importer
	// Probe and Open are set for a system perch follows live: Probe says
	// (nil error) that a URL answers as this system does, with the
	// sessions its answer carried when it carries them (maria's probe
	// reads the task list; nil for the others), and Open opens it.
	Probe func(ctx context.Context, cfg client.Config) ([]events.Task, error)
	Open  func(cfg client.Config) (client.Backend, error)
	// URLExample is the server's usual base URL, for messages that ask
	// for one ("" for a system perch does not follow live).
	URLExample string
	// Demo starts the system's fake server for perch demo, its scripted
	// agent paced by speed (2 = twice as fast); nil for a system without
	// one. The caller opens it with Open and stops it when done.
	Demo func(speed float64) (*DemoServer, error)
	// Local opens the sessions the system's CLI keeps on this machine
	// under a directory (LocalDir says which), as a live backend; nil for
	// a system without a local CLI. See local.go.
	Local    func(dir string) (client.Backend, error)
	LocalDir LocalDir
	// SessionFiles lists the session files the local CLI keeps under
	// its directory (the index reads them as files); nil for a system
	// without a local CLI.
	SessionFiles func(dir string) []string
}

// Live reports whether perch can follow the system's sessions over HTTP.
func (s System) Live() bool { return s.Open != nil }

// Registry is a list of systems, in the order users are shown them.
type Registry struct {
	Systems []System
	// Timeout bounds probing (0: ProbeTimeout).
	Timeout time.Duration
}

// Default is the registry of every system perch has. A system's name is
// its importer's, so it is spelled in one place (client/<system>).
func Default() *Registry {
	live := func(k ingest.Importer, probe func(context.Context, client.Config) ([]events.Task, error), open func(client.Config) (client.Backend, error),
		example string, demo func(float64) (*DemoServer, error)) System {
		return System{Name: k.Name, Files: k, Probe: probe, Open: open, URLExample: example, Demo: demo}
	}
	file := func(k ingest.Importer) System { return System{Name: k.Name, Files: k} }
	// A system whose CLI keeps its sessions on this machine.
	local := func(s System, open func(dir string) (client.Backend, error), dir LocalDir, files func(string) []string) System {
		s.Local, s.LocalDir, s.SessionFiles = open, dir, files
		return s
	}
	return &Registry{Systems: []System{
		live(maria.Importer(), maria.ProbeTasks, maria.Open, "http://localhost:8090/v1", demoMaria),
		live(suna.Importer(), ProbeOnly(suna.Probe), suna.Open, "http://localhost:8000/v1", demoSuna),
		live(pynchy.Importer(), ProbeOnly(pynchy.Probe), pynchy.Open, "http://localhost:8484", demoPynchy),
		file(attocode.Importer()),
		file(anthropic.Importer()),
		local(file(claudecode.Importer()), claudecode.OpenLocal, LocalDir{Env: "CLAUDE_CONFIG_DIR", Home: ".claude"}, claudecode.SessionFiles),
		file(openai.Importer()),
		local(file(codex.Importer()), func(dir string) (client.Backend, error) { return codex.OpenLocal(dir) }, LocalDir{Env: "CODEX_HOME", Home: ".codex"}, codex.SessionFiles),
	}}
}

// ProbeOnly makes a system's Probe of a probe whose answer carries no
// sessions.
func ProbeOnly(probe func(context.Context, client.Config) error) func(context.Context, client.Config) ([]events.Task, error) {
	return func(ctx context.Context, cfg client.Config) ([]events.Task, error) { return nil, probe(ctx, cfg) }
}

// Names lists every system's name.
func (r *Registry) Names() []string {
	out := make([]string, len(r.Systems))
	for i, s := range r.Systems {
		out[i] = s.Name
	}
	return out
}

// LiveNames lists the names of the systems perch follows live, as
// --backend takes them ("maria", "suna", "pynchy").
func (r *Registry) LiveNames() []string {
	var out []string
	for _, s := range r.Systems {
		if s.Live() {
			out = append(out, s.Name)
		}
	}
	return out
}

// LiveSystems lists the systems perch follows live, in order.
func (r *Registry) LiveSystems() []System { return r.live() }

// live lists the systems perch follows live.
func (r *Registry) live() []System {
	var out []System
	for _, s := range r.Systems {
		if s.Live() {
			out = append(out, s)
		}
	}
	return out
}

// Names lists every system's name.
func Names() []string { return Default().Names() }

// LiveNames lists the names of the live backends.
func LiveNames() []string { return Default().LiveNames() }
