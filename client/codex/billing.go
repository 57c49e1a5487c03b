package codex

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/internal/pricing"
)

// The billing of a rollout line: the one reader of Codex's usage, for
// the index's cost reports and the board's totals (totals.go).

type lineUsage struct {
	Input      int64 `json:"input_tokens"`
	Cached     int64 `json:"cached_input_tokens"`
	CacheWrite int64 `json:"cache_write_input_tokens"`
	Output     int64 `json:"output_tokens"`
	Total      int64 `json:"total_tokens"`
}

type billingLine struct {
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Payload   *struct {
		Type   string `json:"type"`
		ID     string `json:"id"`
		Cwd    string `json:"cwd"`
		Model  string `json:"model"`
		CallID string `json:"call_id"`
		Info   *struct {
			Total *lineUsage `json:"total_token_usage"`
			Last  *lineUsage `json:"last_token_usage"`
		} `json:"info"`
	} `json:"payload"`
}

// billing reads what a rollout line says of billing
// (ingest.Importer.Billing): the session and the model of the requests
// that follow (session_meta, then each turn_context), and each request's
// usage, written as a token_count event with the session's running total
// beside it. The running total names the request within its session, so a
// count written twice is one request. The prompt's count includes its
// cached and cache-written parts; Input is what is left.
func billing(line []byte) ingest.Billing {
	var l billingLine
	if json.Unmarshal(line, &l) != nil || l.Payload == nil {
		return ingest.Billing{}
	}
	at, _ := time.Parse(time.RFC3339Nano, l.Timestamp) // zero when there is none
	b := ingest.Billing{At: at}
	p := l.Payload
	switch {
	case l.Type == "session_meta":
		b.Session, b.Cwd, b.Model = p.ID, p.Cwd, p.Model
	case l.Type == "turn_context":
		b.Cwd, b.Model = p.Cwd, p.Model
	case p.CallID != "":
		b.IDs = append(b.IDs, p.CallID)
	case p.Type == "token_count" && p.Info != nil && p.Info.Last != nil && p.Info.Total != nil:
		u := p.Info.Last
		b.Request = &ingest.Request{Key: "total:" + strconv.FormatInt(p.Info.Total.Total, 10), PerSession: true, Final: true,
			Tokens: pricing.Tokens{Input: max(0, u.Input-u.Cached-u.CacheWrite), Output: u.Output, CacheRead: u.Cached, Cache5m: u.CacheWrite}}
	}
	return b
}
