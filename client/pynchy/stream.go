package pynchy

import (
	"context"
	"net/http"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// subscribe follows GET /api/events, reconnecting with backoff until ctx
// ends or the server refuses for good. onConnect runs after each connect,
// before its first frame; every callback runs on one goroutine.
func (l *Live) subscribe(ctx context.Context, onConnect func(), onFrame func(events.Frame), onState func(client.ConnState)) error {
	h := http.Header{"Accept": {"text/event-stream"}}
	if l.token != "" {
		h.Set("Authorization", "Bearer "+l.token)
	}
	u := l.base + "/api/events"
	return sse.Subscribe(ctx, sse.Config{
		URL:       func() string { return u },
		Header:    h,
		Client:    l.stream,
		OnConnect: onConnect,
		Server:    "a pynchy server",
	}, onFrame, onState)
}
