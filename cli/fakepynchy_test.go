package cli

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestFakeDaemonKindPynchy: `perch fake-daemon --kind pynchy` serves a
// fake pynchy and prints the URL to give perch; an unknown kind is a usage
// error.
func TestFakeDaemonKindPynchy(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r := runCtx(ctx, t, "", "fake-daemon", "--kind", "pynchy", "--addr", "127.0.0.1:0")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "fake pynchy server listening on http://127.0.0.1:") || !strings.Contains(r.stdout, "--backend pynchy --url http://127.0.0.1:") {
		t.Errorf("fake-daemon --kind pynchy: %+v", r)
	}
	if r := run(t, "", "fake-daemon", "--kind", "nope"); r.code != 2 || !strings.Contains(r.stderr, "--kind must be maria, suna or pynchy") {
		t.Errorf("fake-daemon --kind nope: %+v", r)
	}
}
