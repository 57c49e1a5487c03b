//go:build !linux

package tui

import "context"

// watchFile is inotify on Linux; elsewhere the store's polling watch is
// used.
func watchFile(context.Context, string) (<-chan struct{}, bool) { return nil, false }
