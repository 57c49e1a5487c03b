package suna

import (
	"time"

	"github.com/perch-tui/perch/backend"
)

// OpenTuned opens the live backend with short timings for tests.
func OpenTuned(cfg backend.Config, poll, retry time.Duration) (*Live, error) {
	return open(cfg, tuning{poll: poll, retry: retry, retryMax: 4 * retry})
}

var EventID = eventID
var IsPing = isPing
