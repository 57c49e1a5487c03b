package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// perSession is a backend whose sessions differ: "quiet" takes no
// follow-ups (a local CLI without a messaging socket).
type perSession struct{ *fakeBackend }

func (p perSession) SessionCapabilities(_ context.Context, id string) (client.Capabilities, string) {
	c := p.Capabilities()
	if id == "quiet" {
		c.Send = false
		return c, "Claude Code 2.0.1 has no messaging socket — read-only"
	}
	return c, ""
}

// A session its backend says is read-only has no composer, and says why
// where the composer would be; the next session of the same backend that
// takes follow-ups has its composer back.
func TestSessionCapabilities(t *testing.T) {
	fb := &fakeBackend{name: "claude-code", caps: &client.Capabilities{Send: true, ServerQueue: true}}
	hs := newHarnessOn(t, 100, 30, Config{}, fb)
	hs.m.b = perSession{fb}
	hs.run(hs.m.attach(events.Task{ID: "quiet", Status: events.StatusIdle}))
	if hs.m.caps.Send || !strings.Contains(hs.view(), "has no messaging socket — read-only") {
		t.Fatalf("the read-only session: caps %+v\n%s", hs.m.caps, hs.view())
	}
	hs.run(hs.m.attach(events.Task{ID: "talkative", Status: events.StatusIdle}))
	if !hs.m.caps.Send || strings.Contains(hs.view(), "read-only") {
		t.Fatalf("the session that takes follow-ups: caps %+v\n%s", hs.m.caps, hs.view())
	}
}
