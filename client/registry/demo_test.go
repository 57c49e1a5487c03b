package registry

import (
	"context"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
)

// TestEveryLiveSystemHasADemo: perch demo reaches every live system
// through the registry: each starts a fake server whose demo session its
// own client opens.
func TestEveryLiveSystemHasADemo(t *testing.T) {
	for _, sys := range Default().LiveSystems() {
		t.Run(sys.Name, func(t *testing.T) {
			if sys.Demo == nil {
				t.Fatal("no demo server")
			}
			srv, err := sys.Demo(50)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			b, err := sys.Open(client.Config{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := b.Session(ctx, srv.Session)
			if err != nil || s.ID != srv.Session {
				t.Fatalf("the demo session %q: %+v, %v", srv.Session, s, err)
			}
		})
	}
}
