package tmuxearly

import (
	"testing"

	"github.com/perch-tui/perch/internal/firstpaint"
)

func TestEnvPaintedIsFirstpaints(t *testing.T) {
	if envPainted != firstpaint.Env {
		t.Fatalf("envPainted %q, firstpaint.Env %q", envPainted, firstpaint.Env)
	}
}
