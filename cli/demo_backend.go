package cli

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/pynchy"
	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/client/suna"
	"github.com/perch-tui/perch/fakedaemon"
	fakepynchy "github.com/perch-tui/perch/fakedaemon/pynchy"
	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
	"github.com/perch-tui/perch/outbox"
)

// demoServer is a fake server of another system, started in this process
// for perch demo --backend: where it listens, the session to open, and
// how to stop it.
type demoServer struct {
	url     string
	session string
	stop    func()
}

// startDemoSuna serves the fake Suna API on a loopback port with a demo
// thread whose first run is under way.
func startDemoSuna(speed float64) (*demoServer, error) {
	delay := time.Duration(float64(20*time.Millisecond) / speed)
	if delay <= 0 {
		delay = -1
	}
	s := fakesuna.New(fakesuna.Options{FrameDelay: delay})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("demo: start the fake Suna API: %w", err)
	}
	thread, _, err := s.Start("", "What is in my workspace?")
	if err != nil {
		_ = ln.Close()
		s.Close()
		return nil, fmt.Errorf("demo: start the demo thread: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(ctx, ln)
	}()
	return &demoServer{url: "http://" + ln.Addr().String() + "/v1", session: thread,
		stop: func() { cancel(); <-done; s.Close() }}, nil
}

// startDemoPynchy serves a fake pynchy on a loopback port whose one chat
// has a run under way.
func startDemoPynchy(speed float64) (*demoServer, error) {
	step := time.Duration(float64(250*time.Millisecond) / speed)
	if step <= 0 {
		step = -1
	}
	s := fakepynchy.New(fakepynchy.Options{StepDelay: step})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("demo: start the fake pynchy server: %w", err)
	}
	const chat = "tui:main"
	if err := s.Say(chat, "What is in this repository?"); err != nil {
		_ = ln.Close()
		_ = s.Close()
		return nil, fmt.Errorf("demo: start the demo chat: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(ctx, ln)
	}()
	return &demoServer{url: "http://" + ln.Addr().String(), session: chat,
		stop: func() { cancel(); <-done; _ = s.Close() }}, nil
}

// runDemoBackend is perch demo --backend suna|pynchy: the matching fake
// server in this process, a scripted agent, and the UI on its demo
// session, its held messages where another terminal finds them.
func runDemoBackend(ctx context.Context, env Env, name, theme string, speed float64) error {
	var (
		srv  *demoServer
		err  error
		open func(client.Config) (client.Backend, error)
	)
	switch name {
	case client.Suna:
		srv, err = startDemoSuna(speed)
		open = suna.Open
	case client.Pynchy:
		srv, err = startDemoPynchy(speed)
		open = pynchy.Open
	default:
		return usagef("perch demo --backend %s: no fake server for it", name)
	}
	if err != nil {
		return err
	}
	defer srv.stop()
	b, err := open(client.Config{URL: srv.url})
	if err != nil {
		return fmt.Errorf("demo: open %s at %s: %w", name, srv.url, err)
	}
	st, err := newDemoState(b.URL()) // demo_outbox.go
	if err != nil {
		return err
	}
	defer st.finish(env.Stderr)
	cfg := withOutbox(uiConfig(env, theme), st.store)
	cfg.Banner = st.banner(srv.session, b.URL())
	cfg.TaskID = srv.session
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
	daemon := fakedaemon.New(fakedaemon.Options{Dialect: fakedaemon.DialectHead, Speed: speed})
	msrv, err := daemon.Start("127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: start the fake daemon: %w", err)
	}
	defer msrv.Close()
	if _, err := daemon.SeedDemo(); err != nil {
		return fmt.Errorf("demo: create the demo task: %w", err)
	}
	ssrv, err := startDemoSuna(speed)
	if err != nil {
		return err
	}
	defer ssrv.stop()
	psrv, err := startDemoPynchy(speed)
	if err != nil {
		return err
	}
	defer psrv.stop()
	urls := map[string]string{client.Maria: msrv.URL, client.Suna: ssrv.url, client.Pynchy: psrv.url}
	backends := map[string]client.Backend{}
	for _, name := range []string{client.Maria, client.Suna, client.Pynchy} {
		b, err := registry.Open(ctx, name, client.Config{URL: urls[name]})
		if err != nil {
			return fmt.Errorf("demo: open %s at %s: %w", name, urls[name], err)
		}
		backends[name] = b
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); playDemo(ctx, backends, speed) }()
	defer func() { cancel(); <-done }()
	if serve {
		for _, name := range []string{client.Maria, client.Suna, client.Pynchy} {
			if _, err := fmt.Fprintf(env.Stdout, "%s %s\n", name, urls[name]); err != nil {
				return err
			}
		}
		<-ctx.Done()
		return ctx.Err()
	}
	var sources []board.Source
	stores := map[string]outbox.Store{}
	for _, name := range []string{client.Maria, client.Suna, client.Pynchy} {
		b := backends[name]
		sources = append(sources, board.Source{Name: name, System: name, URL: urls[name],
			Open: func(context.Context) (client.Backend, error) { return b, nil }})
		// The demo's servers live as long as this process: so do the
		// messages for them, and what was seen of them.
		stores[name] = outbox.NewMemStore()
	}
	return env.runBoardUI(ctx, sources, theme, "", func(source string, _ client.Backend) outbox.Store { return stores[source] })
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
		b := backends[st.System]
		if st.Name != "" {
			_, _ = b.Create(ctx, client.CreateRequest{Name: st.Name, Prompt: st.Text, Cwd: "/tmp"})
			continue
		}
		_, _ = b.Send(ctx, st.To, client.Message{Text: st.Text})
	}
}
