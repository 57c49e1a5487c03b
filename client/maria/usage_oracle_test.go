package maria

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/jsonx"
)

// parseUsageJSON is what parseUsage did with encoding/json: the oracle of
// FuzzParseUsage.
func parseUsageJSON(raw []byte) *events.Usage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || jsonx.IsNull(raw) {
		return nil
	}
	if raw[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil || len(list) == 0 {
			return nil
		}
		var sum events.Usage
		any := false
		for _, r := range list {
			if u := parseUsageJSON(r); u != nil {
				any = true
				sum.InputTokens += u.InputTokens
				sum.OutputTokens += u.OutputTokens
				sum.CachedTokens += u.CachedTokens
				sum.TotalTokens += u.TotalTokens
			}
		}
		if !any {
			return nil
		}
		return &sum
	}
	var w map[string]json.RawMessage
	if json.Unmarshal(raw, &w) != nil {
		return nil
	}
	u := &events.Usage{
		InputTokens:  firstInt(w, "prompt_tokens", "input_tokens", "inputTokens"),
		OutputTokens: firstInt(w, "completion_tokens", "output_tokens", "outputTokens"),
		TotalTokens:  firstInt(w, "total_tokens", "totalTokens"),
		CachedTokens: firstInt(w, "cache_read_tokens", "cache_read_input_tokens", "cachedTokens", "cacheReadTokens"),
	}
	if det, ok := w["prompt_tokens_details"]; ok {
		var d map[string]json.RawMessage
		if json.Unmarshal(det, &d) == nil {
			if c := firstInt(d, "cached_tokens"); c > u.CachedTokens {
				u.CachedTokens = c
			}
		}
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return u
}

// FuzzParseUsage: usage records read without encoding/json count what
// they counted with it.
func FuzzParseUsage(f *testing.F) {
	for _, s := range []string{
		`{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`,
		`{"input_tokens":"7","output_tokens":2.5,"prompt_tokens_details":{"cached_tokens":3}}`,
		`{"prompt_tokens_details":null,"cache_read_input_tokens":4}`,
		`[{"inputTokens":1},{"outputTokens":2},null,5]`, `[]`, `[null]`, `null`, `{}`, `{"a":}`,
		`{"prompt_tokens":1,"prompt_tokens":2}`, `{"prompt_tok\u0065ns":9}`, `{"PROMPT_TOKENS":9}`,
		` { "totalTokens" : 1e3 } `, `"x"`, `{"prompt_tokens_details":{"cached_tokens":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, want := parseUsage(raw), parseUsageJSON(raw); !reflect.DeepEqual(got, want) {
			t.Fatalf("parseUsage(%q):\n got %#v\nwant %#v", raw, got, want)
		}
	})
}
