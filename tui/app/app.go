// Package app is the glue between perch's command line and its terminal
// UI: it implements cli.UI over package tui. Only the perch-ui program
// (cmd/perch-ui) links it; the perch program stays free of the UI's
// libraries and hands every invocation that opens the UI to perch-ui
// (docs/architecture.md, "Two programs").
package app

import "github.com/perch-tui/perch/cli"

// New returns the terminal UI the commands open (cli.Env.UI).
func New() cli.UI { return newUI() }
