package cli

import (
	"bytes"
	"context"
	"testing"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// settledStub is a backend that says which of its follows was used; each
// sends a synced, idle session.
type settledStub struct {
	client.Backend // the rest is never called
	used           []string
}

func (s *settledStub) Name() string { return "stub" }
func (s *settledStub) URL() string  { return "http://stub" }

func (s *settledStub) Capabilities() client.Capabilities { return client.Capabilities{} }

func (s *settledStub) follow(name string, on func(client.Update)) error {
	s.used = append(s.used, name)
	on(client.Update{Synced: true, Events: []events.Event{{Kind: events.KindRunState, RunStatus: events.StatusIdle}}})
	return nil
}

func (s *settledStub) Follow(_ context.Context, _ string, on func(client.Update)) error {
	return s.follow("Follow", on)
}

func (s *settledStub) FollowSettled(_ context.Context, _ string, on func(client.Update)) error {
	return s.follow("FollowSettled", on)
}

// export --until-idle follows a backend that can leave out the running
// run's steps through FollowSettled; tail, and export without
// --until-idle, follow every step.
func TestExportFollowsSettled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		o    liveOpts
		want string
	}{
		{"export --until-idle", exportLiveOpts(true), "FollowSettled"},
		{"export", exportLiveOpts(false), "Follow"},
		{"until idle, not an export", liveOpts{untilIdle: true}, "Follow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			b := &settledStub{}
			if _, err := followLive(context.Background(), Env{Stdout: &out, Stderr: &out}, b, events.Task{ID: "s1"}, tc.o); err != nil {
				t.Fatal(err)
			}
			if len(b.used) != 1 || b.used[0] != tc.want {
				t.Errorf("used %v, want %s", b.used, tc.want)
			}
		})
	}
}
