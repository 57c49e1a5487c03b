package registry

import (
	"context"
	"testing"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/fakedaemon"
)

func benchFake(b *testing.B) string {
	srv, err := fakedaemon.New(fakedaemon.Options{Speed: 20, Seed: 7}).Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	return srv.URL
}

// BenchmarkProbeThenTasks: what `perch tasks --url` costs now: probing
// (the registry, maria's probe on a fresh client) and then the list.
func BenchmarkProbeThenTasks(b *testing.B) {
	base := benchFake(b)
	ctx := context.Background()
	for range b.N {
		be, err := Open(ctx, "", client.Config{URL: base})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := be.Sessions(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNamedTasks: the same with --backend maria (no probe), as
// `perch tasks` was before: a fresh client and the list.
func BenchmarkNamedTasks(b *testing.B) {
	base := benchFake(b)
	ctx := context.Background()
	for range b.N {
		be, err := maria.Open(client.Config{URL: base})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := be.Sessions(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
