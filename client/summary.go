package client

import (
	"context"

	"github.com/perch-tui/perch/events"
)

// RunSummarizer is implemented by backends that can tell how a session's
// last run ended (failed or cancelled, and why), its last reply and its
// usage, from one bounded read: no system's session list says so. A
// board calls it once when it sees a session's run end, never on every
// list.
type RunSummarizer interface {
	// RunSummary summarizes the last run of the session; a session that
	// is still generating may answer for the run before.
	RunSummary(ctx context.Context, sessionID string) (events.RunSummary, error)
}
