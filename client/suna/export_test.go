package suna

import (
	"context"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// OpenTuned opens the live backend with short timings for tests.
func OpenTuned(cfg client.Config, poll, retry time.Duration) (*Live, error) {
	return open(cfg, tuning{poll: poll, retry: retry, retryMax: 4 * retry})
}

var EventID = eventID
var IsPing = isPing

// LoadHistoryBody decodes a history answer as Follow's load does after a
// run (a fresh decoder, every row), handing send the events.
func LoadHistoryBody(body []byte, send func([]events.Event)) error {
	rows, err := historyRows(body)
	if err != nil {
		return err
	}
	f := &follower{}
	evs, _, err := f.decodeRows(context.Background(), rows, nil, true)
	send(evs)
	return err
}

// MayEnd is mayEnd, for its table test.
var MayEnd = mayEnd
