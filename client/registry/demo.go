package registry

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/perch-tui/perch/fakedaemon"
	fakepynchy "github.com/perch-tui/perch/fakedaemon/pynchy"
	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
)

// DemoServer is a live system's fake server started in this process for
// perch demo: where it listens, the session it has under way, and how to
// stop it.
type DemoServer struct {
	URL     string
	Session string
	Stop    func()
}

// demoMaria serves the fake maria daemon on a loopback port with the demo
// task.
func demoMaria(speed float64) (*DemoServer, error) {
	daemon := fakedaemon.New(fakedaemon.Options{Dialect: fakedaemon.DialectHead, Speed: speed})
	srv, err := daemon.Start("127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo: start the fake daemon: %w", err)
	}
	id, err := daemon.SeedDemo()
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("demo: create the demo task: %w", err)
	}
	return &DemoServer{URL: srv.URL, Session: id, Stop: func() { srv.Close() }}, nil
}

// demoSuna serves the fake Suna API on a loopback port with a demo thread
// whose first run is under way.
func demoSuna(speed float64) (*DemoServer, error) {
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
	return &DemoServer{URL: "http://" + ln.Addr().String() + "/v1", Session: thread,
		Stop: func() { cancel(); <-done; s.Close() }}, nil
}

// demoPynchy serves a fake pynchy on a loopback port whose one chat has a
// run under way.
func demoPynchy(speed float64) (*DemoServer, error) {
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
	return &DemoServer{URL: "http://" + ln.Addr().String(), Session: chat,
		Stop: func() { cancel(); <-done; _ = s.Close() }}, nil
}
