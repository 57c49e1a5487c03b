// Command perch is a terminal client for live agent sessions: its command
// line, its scriptable commands and its terminal UI (package cli).
package main

import (
	"context"
	"os"

	"github.com/perch-tui/perch/cli"
	"github.com/perch-tui/perch/internal/prof"
	// Attocode's session stores are SQLite databases (client/attocode).
)

func main() {
	stopProfile := prof.Start()                          // a no-op unless built with -tags perchprof
	ctx, stop := cli.NotifyContext(context.Background()) // Ctrl-C: exit 130, said on stderr
	code := cli.Main(ctx, cli.OSEnv(), os.Args[1:])
	stop()
	stopProfile()
	os.Exit(code)
}
