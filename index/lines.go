package index

import (
	"encoding/json"
	"strconv"
	"time"
)

// Billing is read from the source's own lines, not from the decoded
// events: a cost report needs, per model request, what the normalized
// conversation does not carry — the model, the request's id across every
// copy of it, the cache writes by lifetime, and whether the reply's output
// count is final — and the times of the lines. The decoders stay the one
// reader of the conversation; this reads only usage records and times.

// request is one model request's usage, merged over its copies.
type request struct {
	key   string
	at    time.Time
	model string
	// input excludes cache reads and writes (Anthropic's meaning).
	input, output, cacheRead, cache5m, cache1h int64
	// final: a copy said why the reply stopped, so its output count is
	// the whole; otherwise the output is the count so far (a lower bound).
	final bool
	cost  *float64 // the source's own figure, when it gives one
}

// merge adds another copy of the same request: each count keeps its
// largest value (a streamed copy carries the output so far), the time its
// earliest.
func (r *request) merge(o *request) {
	r.input = max(r.input, o.input)
	r.output = max(r.output, o.output)
	r.cacheRead = max(r.cacheRead, o.cacheRead)
	r.cache5m = max(r.cache5m, o.cache5m)
	r.cache1h = max(r.cache1h, o.cache1h)
	r.final = r.final || o.final
	if r.model == "" {
		r.model = o.model
	}
	if !o.at.IsZero() && (r.at.IsZero() || o.at.Before(r.at)) {
		r.at = o.at
	}
	if o.cost != nil && (r.cost == nil || *o.cost > *r.cost) {
		r.cost = o.cost
	}
}

// lineInfo is what one source line tells besides the conversation.
type lineInfo struct {
	at      time.Time
	session string // the system's session id
	cwd     string
	ids     []string // the ids events of this line may carry (uuid, message id, call id)
	req     *request
	// runCost is a run's total cost as a result line reports it.
	runCost *float64
	// sessionCost is the session's cost so far as the CLI itself keeps it
	// (Claude Code's cost-state line: the latest is the whole).
	sessionCost *float64
}

// lineReader reads the lines of one system's files.
type lineReader func(line []byte, li *lineInfo)

// lineReaders are the systems whose lines carry per-request usage.
var lineReaders = map[string]lineReader{
	"claude-code": claudeLine,
	"codex":       codexLine,
}

type ccUsage struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	Lifetimes     *struct {
		M5 int64 `json:"ephemeral_5m_input_tokens"`
		H1 int64 `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

type ccLine struct {
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
		Usage      *ccUsage        `json:"usage"`
		Content    json.RawMessage `json:"content"`
	} `json:"message"`
}

// claudeLine reads a Claude Code line: a session file's or stream-json's.
func claudeLine(line []byte, li *lineInfo) {
	var l ccLine
	if json.Unmarshal(line, &l) != nil {
		return
	}
	li.at = parseTime(l.Timestamp)
	li.session = l.SessionID
	if li.session == "" {
		li.session = l.SessionX
	}
	li.cwd = l.Cwd
	if l.UUID != "" {
		li.ids = append(li.ids, l.UUID)
	}
	if l.Type == "result" && l.TotalCost != nil {
		li.runCost = l.TotalCost
	}
	if l.Type == "cost-state" && l.StateCost != nil {
		li.sessionCost = l.StateCost
	}
	m := l.Message
	if m == nil {
		return
	}
	if m.ID != "" {
		li.ids = append(li.ids, m.ID)
	}
	if ids := toolUseIDs(m.Content); len(ids) > 0 {
		li.ids = append(li.ids, ids...)
	}
	if l.Type != "assistant" || m.Usage == nil || m.Model == "<synthetic>" {
		return
	}
	u := m.Usage
	r := &request{at: li.at, model: m.Model, input: u.Input, output: u.Output, cacheRead: u.CacheRead,
		final: m.StopReason != nil && *m.StopReason != "", cost: l.CostUSD}
	// The write's lifetimes when the line splits them; else all of it at
	// the default five minutes.
	if lt := u.Lifetimes; lt != nil && lt.M5+lt.H1 == u.CacheCreation {
		r.cache5m, r.cache1h = lt.M5, lt.H1
	} else {
		r.cache5m = u.CacheCreation
	}
	// Every copy of one API reply has its message id and its request's
	// id (requestId; requestRef in newer versions): the copies a resumed
	// or forked session repeats too.
	req := l.RequestID
	if req == "" {
		req = l.RequestRf
	}
	switch {
	case m.ID != "":
		r.key = "anthropic:" + m.ID + ":" + req
	case l.UUID != "":
		r.key = "claude-code:" + l.UUID
	default:
		return
	}
	li.req = r
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

type cxUsage struct {
	Input     int64 `json:"input_tokens"`
	Cached    int64 `json:"cached_input_tokens"`
	Output    int64 `json:"output_tokens"`
	Total     int64 `json:"total_tokens"`
	CacheWrtn int64 `json:"cache_write_input_tokens"`
}

type cxLine struct {
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Payload   *struct {
		Type   string `json:"type"`
		ID     string `json:"id"`
		Cwd    string `json:"cwd"`
		Model  string `json:"model"`
		CallID string `json:"call_id"`
		Info   *struct {
			Total *cxUsage `json:"total_token_usage"`
			Last  *cxUsage `json:"last_token_usage"`
		} `json:"info"`
	} `json:"payload"`
}

// codexLine reads a Codex rollout line. Codex writes the usage of each
// model request as a token_count event with the session's running total
// beside it: the running total names the request, so a count written
// twice is one request.
func codexLine(line []byte, li *lineInfo) {
	var l cxLine
	if json.Unmarshal(line, &l) != nil || l.Payload == nil {
		return
	}
	li.at = parseTime(l.Timestamp)
	p := l.Payload
	switch {
	case l.Type == "session_meta":
		li.session, li.cwd = p.ID, p.Cwd
	case l.Type == "turn_context":
		li.cwd = p.Cwd
		li.req = &request{model: p.Model} // the model of the requests that follow
	case p.CallID != "":
		li.ids = append(li.ids, p.CallID)
	case p.Type == "token_count" && p.Info != nil && p.Info.Last != nil && p.Info.Total != nil:
		u := p.Info.Last
		li.req = &request{key: "total:" + strconv.FormatInt(p.Info.Total.Total, 10), at: li.at,
			input: max(0, u.Input-u.Cached-u.CacheWrtn), output: u.Output, cacheRead: u.Cached, cache5m: u.CacheWrtn, final: true}
	}
}

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
