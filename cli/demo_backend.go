package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/outbox"
)

// runDemoBackend is perch demo --backend NAME for a system other than
// maria: its fake server in this process (the registry knows how to start
// it), a scripted agent, and the UI on its demo session, its held
// messages where another terminal finds them.
func runDemoBackend(ctx context.Context, env Env, name, theme string, speed float64) error {
	sys, err := registry.Default().Lookup(name)
	if err != nil || sys.Demo == nil {
		return usagef("perch demo --backend %s: no fake server for it", name)
	}
	srv, err := sys.Demo(speed)
	if err != nil {
		return err
	}
	defer srv.Stop()
	b, err := sys.Open(client.Config{URL: srv.URL})
	if err != nil {
		return fmt.Errorf("demo: open %s at %s: %w", name, srv.URL, err)
	}
	st, err := newDemoState(b.URL()) // demo_outbox.go
	if err != nil {
		return err
	}
	defer st.finish(env.Stderr)
	cfg := withOutbox(uiConfig(env, theme), st.store)
	cfg.Banner = st.banner(srv.Session, b.URL())
	cfg.TaskID = srv.Session
	return env.runUI(ctx, b, cfg)
}

// demoStep is one scripted act of perch demo --all: at After (divided by
// the speed), on the system's backend, create a session or send to one.
type demoStep struct {
	After  time.Duration
	System string
	Name   string // create a session with this name (maria, Suna), or
	To     string // send to this session ("" with Name)
	Text   string
}

// demoScript is what demo --all's sessions do over a few minutes: runs
// that finish, runs that fail (the fake maria's "provider error"), and
// follow-ups that wait behind a run.
var demoScript = []demoStep{
	{After: 5 * time.Second, System: client.Maria, Name: "deploy", Text: "provider error: deploy to staging"},
	{After: 20 * time.Second, System: client.Suna, Name: "release notes", Text: "What is in my workspace?"},
	{After: 35 * time.Second, System: client.Pynchy, To: "tui:main", Text: "And the tests?"},
	{After: 60 * time.Second, System: client.Maria, Name: "docs", Text: "What does this project do?"},
	{After: 90 * time.Second, System: client.Pynchy, To: "tui:main", Text: "Summarize the last change."},
	{After: 120 * time.Second, System: client.Maria, Name: "nightly", Text: "provider error: nightly build"},
	{After: 150 * time.Second, System: client.Suna, Name: "triage", Text: "Which issues are open?"},
}

// runDemoAll is perch demo --all: the fake maria, Suna and pynchy servers
// together, with sessions that run, finish, fail and wait over a few
// minutes (demoScript). --serve prints their URLs ("system URL" lines)
// and serves until interrupted, for perch watch and perch tasks --all;
// otherwise the UI opens on the board of the three.
func runDemoAll(ctx context.Context, env Env, theme string, speed float64, serve bool) error {
	var (
		names    []string
		urls     = map[string]string{}
		backends = map[string]client.Backend{}
	)
	for _, sys := range registry.Default().LiveSystems() {
		if sys.Demo == nil {
			continue
		}
		srv, err := sys.Demo(speed)
		if err != nil {
			return err
		}
		defer srv.Stop()
		b, err := sys.Open(client.Config{URL: srv.URL})
		if err != nil {
			return fmt.Errorf("demo: open %s at %s: %w", sys.Name, srv.URL, err)
		}
		names = append(names, sys.Name)
		urls[sys.Name], backends[sys.Name] = srv.URL, b
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); playDemo(ctx, backends, speed) }()
	defer func() { cancel(); <-done }()
	if serve {
		for _, name := range names {
			if _, err := fmt.Fprintf(env.Stdout, "%s %s\n", name, urls[name]); err != nil {
				return err
			}
		}
		<-ctx.Done()
		return ctx.Err()
	}
	var sources []board.Source
	stores := map[string]outbox.Store{}
	for _, name := range names {
		b := backends[name]
		sources = append(sources, board.Source{Name: name, System: name, URL: urls[name],
			Open: func(context.Context) (client.Backend, error) { return b, nil }})
		// The demo's servers live as long as this process: so do the
		// messages for them, and what was seen of them.
		stores[name] = outbox.NewMemStore()
	}
	return env.runBoardUI(ctx, sources, theme, "", false, func(source string, _ client.Backend) outbox.Store { return stores[source] })
}

// playDemo plays demoScript until it ends or ctx does.
func playDemo(ctx context.Context, backends map[string]client.Backend, speed float64) {
	start := time.Now()
	for _, st := range demoScript {
		at := start.Add(time.Duration(float64(st.After) / speed))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(at)):
		}
		b, ok := backends[st.System]
		if !ok {
			continue
		}
		if st.Name != "" {
			_, _ = b.Create(ctx, client.CreateRequest{Name: st.Name, Prompt: st.Text, Cwd: "/tmp"})
			continue
		}
		_, _ = b.Send(ctx, st.To, client.Message{Text: st.Text})
	}
}
