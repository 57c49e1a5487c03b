// Command perch is a terminal client for live maria agent sessions.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/perch-tui/perch/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := cli.OSEnv()
	env.UI = newUI()
	code := cli.Main(ctx, env, os.Args[1:])
	stop()
	os.Exit(code)
}
