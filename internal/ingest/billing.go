package ingest

import (
	"time"

	"github.com/perch-tui/perch/internal/pricing"
)

// Billing is what one line of a session file says beside the
// conversation, for what a session cost (the index's usage, the board's
// totals): per model request, what the normalized events do not carry —
// the model, a key that names the request across every copy of it, the
// cache writes by lifetime, whether the output count is final — and the
// line's time and session. A system whose files carry per-request usage
// reads its lines with Importer.Billing; its decoder stays the one reader
// of the conversation.
type Billing struct {
	At      time.Time
	Session string // the system's session id, where the line names it
	Cwd     string
	// IDs are the ids the line's events may carry (a uuid, a message id,
	// tool call ids), so a reader can find the line of an event.
	IDs []string
	// Model is the model of the requests that follow, for a file that
	// names it apart from them (Codex's turn_context); "" otherwise.
	Model string
	// Request is the usage of the model request the line reports, nil
	// for none.
	Request *Request
	// RunCost is a run's total cost as a result line reports it;
	// SessionCost the session's cost so far as the CLI itself keeps it
	// (the latest is the whole).
	RunCost, SessionCost *float64
}

// Request is one model request's usage as one line reports it. A CLI
// writes a request again as its reply streams (the output so far) and
// when a session is resumed or forked: every copy has the same Key.
type Request struct {
	// Key names the request; "" when the line gives nothing to name it
	// by (each such line is a request of its own). PerSession: the key
	// names it only within its session.
	Key        string
	PerSession bool
	// Model is the request's model; "" for the file's current one
	// (Billing.Model of an earlier line).
	Model  string
	Tokens pricing.Tokens
	// Final: the line says why the reply stopped, so its output count is
	// the whole; otherwise it is the count so far (a lower bound).
	Final bool
	// Cost is the source's own figure for the request, nil for none.
	Cost *float64
}
