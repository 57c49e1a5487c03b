package cli

import (
	"context"
	"encoding/json"
	"time"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/sanitize"
)

// A source going down and coming back is news for a script as much as a
// session's change: perch watch prints it on stdout as a line of its own
// ("source NAME down: why", "source NAME up"), or with --json as an
// object {"type":"source",…}. Connecting is neither: a source is up once
// it is live, down once it is anything else (retrying, refused, …).

// sourceChangeJSON is --json's object of a source that went up or down.
type sourceChangeJSON struct {
	Type   string `json:"type"` // "source"
	At     string `json:"at"`
	Source string `json:"source"`
	System string `json:"system,omitempty"`
	URL    string `json:"url,omitempty"`
	State  string `json:"state"` // "up" or "down"
	Conn   string `json:"conn"`  // the connection's state word (live, retrying, refused token, …)
	Error  string `json:"error,omitempty"`
}

// sourceUpDown is "up", "down", or "" for a source still connecting.
func sourceUpDown(s board.SourceState) string {
	switch s.Conn {
	case board.Connecting, "":
		return ""
	case board.Live:
		return "up"
	}
	return "down"
}

// sourceChange is the line (or JSON object) of a source that went up or
// down, and whether there is one: prev is what was said of the source
// before ("" for nothing yet).
func sourceChange(s board.SourceState, prev string, asJSON bool, now time.Time) (line, state string, ok bool) {
	state = sourceUpDown(s)
	if state == "" || state == prev {
		return "", prev, false
	}
	if asJSON {
		data, _ := json.Marshal(sourceChangeJSON{Type: "source", At: now.UTC().Format(time.RFC3339Nano), Source: s.Name, System: s.System,
			URL: s.URL, State: state, Conn: string(s.Conn), Error: s.Err})
		return string(data), state, true
	}
	line = "source " + sanitize.Line(s.Name) + " " + state
	if state == "down" {
		line += ": " + s.Line(now)
	}
	return line, state, true
}

// snapshotJSON is perch watch --json --snapshot's first line: every
// source and session as perch tasks --all --json gives them.
type snapshotJSON struct {
	Type string `json:"type"` // "snapshot"
	At   string `json:"at"`
	boardOut
}

// waitSettled waits until every source of b has answered once (listed its
// sessions, or failed) and the last runs being read are in, or
// settleTimeout passed, or ctx ended.
func waitSettled(ctx context.Context, b *board.Board) error {
	deadline := time.NewTimer(settleTimeout)
	defer deadline.Stop()
	for {
		sources, rows := b.Snapshot(board.Filter{})
		settled := true
		for _, s := range sources {
			settled = settled && s.Settled()
		}
		for _, r := range rows {
			settled = settled && !r.Settling && !r.Pending // a last run still being read
		}
		if settled {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return nil
		case <-b.Updated():
		}
	}
}
