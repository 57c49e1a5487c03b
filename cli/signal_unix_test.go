//go:build unix

package cli

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// A real SIGINT ends NotifyContext's context with an Interrupted cause
// that Main turns into exit 130.
func TestNotifyContextSIGINT(t *testing.T) {
	ctx, stop := NotifyContext(context.Background())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGINT did not end the context")
	}
	i, ok := interruption(ctx)
	if !ok || i.exitCode() != 130 || i.word() != "interrupted" {
		t.Fatalf("interruption: %v %v", i, ok)
	}
}
