//go:build perch_notui

package main

import "github.com/perch-tui/perch/cli"

// newUI: this perch has no terminal UI; its commands say so.
func newUI() cli.UI { return nil }
