package codex

import (
	"bytes"

	"github.com/perch-tui/perch/internal/pricing"
	"github.com/perch-tui/perch/internal/tally"
)

// A session's cost needs its tokens by model, and so its whole rollout:
// listing shows the tail's running total at once, and WatchSessions counts
// the rollouts in the background (internal/tally), newest first, a grown
// one on from where it stopped; the counts are kept (KeepTotals) so that
// the next start has them without reading the rollouts again. Once a
// rollout is counted its tokens and cost both come from the count, one
// scope.

// KeepTotals keeps the sessions' counts in the file at path (perch's
// state directory), read back now.
func (l *Local) KeepTotals(path string) { l.totals.Keep(path) }

// UsePrices prices the sessions at p (the embedded table with the config
// file's [prices]) instead of the embedded table alone.
func (l *Local) UsePrices(p pricing.Prices) { l.totals.UsePrices(p) }

// usage is the rollout's tokens and cost: the count's when the rollout
// was counted, else the tail's running total and no cost yet.
func (l *Local) usage(r *rollout) (tokens int64, cost float64, hasCost bool) {
	if tokens, cost, hasCost, found := l.totals.Usage(r.path); found {
		return tokens, cost, hasCost
	}
	// The prompt counts its cached part, as events.Usage says, so a
	// session's tokens are prompt plus output.
	if u := r.tail.usage; u != nil {
		return u.InputTokens + u.OutputTokens, 0, false
	}
	return 0, 0, false
}

// countLine counts one rollout line (billing): the model of the requests
// that follow, and each request once. Most lines hold neither: they are
// passed over unread.
func countLine(e *tally.Entry, line []byte) {
	if !bytes.Contains(line, []byte(`"session_meta"`)) && !bytes.Contains(line, []byte(`"turn_context"`)) && !bytes.Contains(line, []byte(`"token_count"`)) {
		return
	}
	b := billing(line)
	if b.Model != "" {
		e.Model = b.Model
	}
	if r := b.Request; r != nil {
		e.Request(r.Key, e.Model, r.Tokens)
	}
}
