package claudecode

import (
	"encoding/json"
	"time"

	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/internal/pricing"
)

// The billing of a Claude Code line (a session file's, or stream-json's):
// the one reader of its usage, for the index's cost reports and the
// board's totals (totals.go).

type lineUsage struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	Lifetimes     *struct {
		M5 int64 `json:"ephemeral_5m_input_tokens"`
		H1 int64 `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

type billingLine struct {
	Type      string   `json:"type"`
	Timestamp string   `json:"timestamp"`
	SessionID string   `json:"sessionId"`
	SessionX  string   `json:"session_id"`
	Cwd       string   `json:"cwd"`
	UUID      string   `json:"uuid"`
	RequestID string   `json:"requestId"`
	RequestRf string   `json:"requestRef"`
	CostUSD   *float64 `json:"costUSD"`
	TotalCost *float64 `json:"total_cost_usd"`
	StateCost *float64 `json:"totalCostUSD"`
	Message   *struct {
		ID         string          `json:"id"`
		Model      string          `json:"model"`
		StopReason *string         `json:"stop_reason"`
		Usage      *lineUsage      `json:"usage"`
		Content    json.RawMessage `json:"content"`
	} `json:"message"`
}

// billing reads what a line says of billing (ingest.Importer.Billing).
// An assistant line's usage is its reply's: every copy of one API reply
// (a line per content block, a resumed or forked session's copy) has its
// message id and its request's id (requestId; requestRef in newer
// versions), so they name it together; a line without a message id is a
// request of its own (its uuid names it). The cache writes go by lifetime
// when the line splits them, else all at five minutes (the CLI's
// default). The CLI's synthetic replies (model "<synthetic>": an error
// it wrote itself) were never billed.
func billing(line []byte) ingest.Billing {
	var l billingLine
	if json.Unmarshal(line, &l) != nil {
		return ingest.Billing{}
	}
	at, _ := time.Parse(time.RFC3339Nano, l.Timestamp) // zero when there is none
	b := ingest.Billing{At: at, Session: l.SessionID, Cwd: l.Cwd}
	if b.Session == "" {
		b.Session = l.SessionX
	}
	if l.UUID != "" {
		b.IDs = append(b.IDs, l.UUID)
	}
	if l.Type == "result" && l.TotalCost != nil {
		b.RunCost = l.TotalCost
	}
	if l.Type == "cost-state" && l.StateCost != nil {
		b.SessionCost = l.StateCost
	}
	m := l.Message
	if m == nil {
		return b
	}
	if m.ID != "" {
		b.IDs = append(b.IDs, m.ID)
	}
	b.IDs = append(b.IDs, toolUseIDs(m.Content)...)
	if l.Type != "assistant" || m.Usage == nil || m.Model == "<synthetic>" {
		return b
	}
	u := m.Usage
	r := &ingest.Request{Model: m.Model, Final: m.StopReason != nil && *m.StopReason != "", Cost: l.CostUSD,
		Tokens: pricing.Tokens{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, Cache5m: u.CacheCreation}}
	if lt := u.Lifetimes; lt != nil && lt.M5+lt.H1 == u.CacheCreation {
		r.Tokens.Cache5m, r.Tokens.Cache1h = lt.M5, lt.H1
	}
	req := l.RequestID
	if req == "" {
		req = l.RequestRf
	}
	switch {
	case m.ID != "":
		r.Key = "anthropic:" + m.ID + ":" + req
	case l.UUID != "":
		r.Key = "claude-code:" + l.UUID
	}
	b.Request = r
	return b
}

// toolUseIDs are the ids of the tool calls and results a message's content
// holds: the events of tool results carry them.
func toolUseIDs(content json.RawMessage) []string {
	if len(content) == 0 || content[0] != '[' {
		return nil
	}
	var blocks []struct {
		ID        string `json:"id"`
		ToolUseID string `json:"tool_use_id"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return nil
	}
	var ids []string
	for _, b := range blocks {
		if b.ID != "" {
			ids = append(ids, b.ID)
		}
		if b.ToolUseID != "" {
			ids = append(ids, b.ToolUseID)
		}
	}
	return ids
}
