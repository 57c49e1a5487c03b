package cli

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/backend/suna"
	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/outbox/live"
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

// runDemoBackend is perch demo --backend suna|pynchy: the matching fake
// server in this process, a scripted agent, and the UI on its demo
// session. Messages are kept in memory (what is left is printed at exit).
func runDemoBackend(ctx context.Context, env Env, ui UI, name, theme string, speed float64) error {
	var (
		srv  *demoServer
		err  error
		open func(backend.Config) (backend.Backend, error)
	)
	switch name {
	case backend.Suna:
		srv, err = startDemoSuna(speed)
		open = suna.Open
	default:
		return startDemoOther(ctx, env, ui, name, theme, speed)
	}
	if err != nil {
		return err
	}
	defer srv.stop()
	b, err := open(backend.Config{URL: srv.url})
	if err != nil {
		return fmt.Errorf("demo: open %s at %s: %w", name, srv.url, err)
	}
	return ui.Backend(ctx, b, UIOptions{TaskID: srv.session, Theme: theme, Cwd: env.Cwd, Getenv: env.Getenv,
		Home: env.Home, Unsent: env.Stderr, OutboxStore: outbox.NewMemStore(), OutboxBackend: live.New(b)})
}
