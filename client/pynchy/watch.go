package pynchy

import (
	"bytes"
	"context"
	"slices"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

var (
	_ client.SessionWatcher      = (*Live)(nil)
	_ client.SessionStateWatcher = (*Live)(nil)
)

// WatchSessions follows the global stream for the chat list: the list is
// read again after every (re)connect and when a chat it does not hold
// speaks; agent_activity events set a chat generating or idle.
func (l *Live) WatchSessions(ctx context.Context, on func([]events.Task)) error {
	return l.WatchSessionsState(ctx, on, func(client.ConnState) {})
}

// WatchSessionsState is WatchSessions that also reports the global
// stream's connection state (client.SessionStateWatcher): a list shows
// when pynchy went away, not only when it answered.
func (l *Live) WatchSessionsState(ctx context.Context, on func([]events.Task), onState func(client.ConnState)) error {
	if onState == nil {
		onState = func(client.ConnState) {}
	}
	var list []events.Task
	publish := func() { on(slices.Clone(list)) }
	refresh := func() {
		tasks, err := l.Sessions(ctx)
		if err != nil {
			return // the stream's next connect tries again
		}
		list = tasks
		publish()
	}
	frame := func(fr events.Frame) {
		o := normalize.AsObjectShared(ingest.Repair(bytes.TrimSpace(fr.Data)))
		jid := normalize.Str(o["chat_jid"])
		if jid == "" {
			return
		}
		i := slices.IndexFunc(list, func(t events.Task) bool { return t.ID == jid })
		if i < 0 {
			refresh() // a chat that appeared since the list was read
			return
		}
		if normalize.Str(o["type"]) != "agent_activity" {
			return
		}
		active, ok := normalize.Bool(o["active"])
		if !ok {
			return
		}
		l.setActive(jid, active)
		status := events.StatusIdle
		if active {
			status = events.StatusGenerating
		}
		if list[i].Status != status {
			list[i].Status = status
			publish()
		}
	}
	return l.subscribe(ctx, refresh, frame, onState)
}
