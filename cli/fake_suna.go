package cli

import (
	"context"
	"fmt"
	"net"
	"time"

	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
)

// sunaFlags are fake-daemon's flags for --kind suna.
type sunaFlags struct {
	token      *string
	bench      *int
	dropEvery  *int
	ping       *time.Duration
	pause      *time.Duration
	cached     *bool
	trim       *int
	frameDelay *time.Duration
}

func addSunaFlags(fs *flagSet) sunaFlags {
	return sunaFlags{
		token:      fs.String("token", "", "with --kind suna: the bearer token the fake requires (none: no auth)"),
		bench:      fs.Int("bench-frames", 0, "with --kind suna: also serve a finished run of about N frames (benchmark load)"),
		dropEvery:  fs.Int("drop-every", 0, "with --kind suna: cut each stream connection after N frames"),
		ping:       fs.Duration("ping", 5*time.Second, "with --kind suna: keep-alive interval of the stream"),
		pause:      fs.Duration("pause", 0, "with --kind suna: a quiet spell the demo agent takes before its answer"),
		cached:     fs.Bool("cached-running", false, "with --kind suna: the stream never reports a run's end (a cached status)"),
		trim:       fs.Int("trim", 0, "with --kind suna: keep only the last N frames of a run for the catch-up"),
		frameDelay: fs.Duration("frame-delay", 20*time.Millisecond, "with --kind suna: pause between two frames of a scripted run (divided by --speed)"),
	}
}

// runFakeSuna serves the fake Suna API with a demo thread until ctx ends.
func runFakeSuna(ctx context.Context, env Env, addr string, speed float64, f sunaFlags) error {
	if *f.bench < 0 || *f.dropEvery < 0 || *f.trim < 0 || *f.ping <= 0 {
		return usagef("--bench-frames, --drop-every and --trim must not be negative, --ping must be positive")
	}
	delay := time.Duration(float64(*f.frameDelay) / speed)
	if delay <= 0 {
		delay = -1
	}
	s := fakesuna.New(fakesuna.Options{Token: *f.token, Ping: *f.ping, Pause: *f.pause, DropEvery: *f.dropEvery,
		CachedRunning: *f.cached, Trim: *f.trim, FrameDelay: delay})
	defer s.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("fake Suna API: listen on %s: %w", addr, err)
	}
	demo, _, err := s.Start("", "What is in my workspace?")
	if err != nil {
		_ = ln.Close()
		return err
	}
	label := "demo thread " + demo
	if *f.bench > 0 {
		tid, rid, err := s.Start("", fmt.Sprintf("bench %d", *f.bench))
		if err != nil {
			_ = ln.Close()
			return err
		}
		for s.RunStatus(rid) == "running" {
			select {
			case <-ctx.Done():
				_ = ln.Close()
				return nil
			case <-time.After(10 * time.Millisecond):
			}
		}
		label += fmt.Sprintf("; bench thread %s, run %s: %d frames", tid, rid, s.Frames(rid))
	}
	url := "http://" + ln.Addr().String() + "/v1"
	auth := ""
	if *f.token != "" {
		auth = " --token … (the token given here)"
	}
	if _, err := fmt.Fprintf(env.Stdout, "fake Suna API listening on %s (%s)\nuse: perch --backend suna --url %s%s\n",
		url, label, url, auth); err != nil {
		_ = ln.Close()
		return err
	}
	return s.Serve(ctx, ln)
}
