package codex

import (
	"bytes"
	"encoding/json"
	"strconv"

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

type countUsage struct {
	Input      int64 `json:"input_tokens"`
	Cached     int64 `json:"cached_input_tokens"`
	CacheWrite int64 `json:"cache_write_input_tokens"`
	Output     int64 `json:"output_tokens"`
	Total      int64 `json:"total_tokens"`
}

// countLine counts one rollout line: the model of the requests that
// follow (session_meta, then each turn_context), and each request's
// token_count, once (its running total names it: a count written twice is
// one request). The prompt's count includes its cached part.
func countLine(e *tally.Entry, line []byte) {
	meta := bytes.Contains(line, []byte(`"session_meta"`))
	if !meta && !bytes.Contains(line, []byte(`"turn_context"`)) && !bytes.Contains(line, []byte(`"token_count"`)) {
		return
	}
	var o struct {
		Type    string `json:"type"`
		Payload struct {
			Type  string `json:"type"`
			Model string `json:"model"`
			Info  *struct {
				Total *countUsage `json:"total_token_usage"`
				Last  *countUsage `json:"last_token_usage"`
			} `json:"info"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &o) != nil {
		return
	}
	p := o.Payload
	switch {
	case o.Type == "session_meta" && e.Model == "":
		e.Model = p.Model
	case o.Type == "turn_context" && p.Model != "":
		e.Model = p.Model
	case o.Type == "event_msg" && p.Type == "token_count" && p.Info != nil && p.Info.Last != nil && p.Info.Total != nil:
		u := p.Info.Last
		e.Request("total:"+strconv.FormatInt(p.Info.Total.Total, 10), e.Model, pricing.Tokens{
			Input: max(0, u.Input-u.Cached-u.CacheWrite), Output: u.Output, CacheRead: u.Cached, Cache5m: u.CacheWrite})
	}
}
