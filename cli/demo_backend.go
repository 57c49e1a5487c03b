package cli

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/backend/pynchy"
	"github.com/perch-tui/perch/backend/suna"
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
// session. Messages are kept in memory (what is left is printed at exit).
func runDemoBackend(ctx context.Context, env Env, name, theme string, speed float64) error {
	var (
		srv  *demoServer
		err  error
		open func(backend.Config) (backend.Backend, error)
	)
	switch name {
	case backend.Suna:
		srv, err = startDemoSuna(speed)
		open = suna.Open
	case backend.Pynchy:
		srv, err = startDemoPynchy(speed)
		open = pynchy.Open
	default:
		return usagef("perch demo --backend %s: no fake server for it", name)
	}
	if err != nil {
		return err
	}
	defer srv.stop()
	b, err := open(backend.Config{URL: srv.url})
	if err != nil {
		return fmt.Errorf("demo: open %s at %s: %w", name, srv.url, err)
	}
	cfg := withOutbox(uiConfig(env, theme), outbox.NewMemStore())
	cfg.TaskID = srv.session
	return env.runUI(ctx, b, cfg)
}
