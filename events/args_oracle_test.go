package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/perch-tui/perch/jsonx"
)

// normalizeArgsJSON is what normalizeArgs did with encoding/json (a
// validating and a decoding pass per level, json.Compact): the oracle of
// FuzzNormalizeArgs.
func normalizeArgsJSON(raw []byte) (args json.RawMessage, text, errText string, double bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return nil, "", "", false
	}
	compactJSON := func(raw []byte) json.RawMessage {
		var b bytes.Buffer
		if json.Compact(&b, raw) != nil {
			return append(json.RawMessage(nil), raw...)
		}
		return b.Bytes()
	}
	if raw[0] != '"' {
		return compactJSON(raw), string(raw), "", false
	}
	s, ok := jsonx.Unquote(raw)
	if !ok {
		err := json.Unmarshal(raw, new(string))
		if err == nil {
			err = errors.New("not a JSON string")
		}
		return nil, string(raw), shortErr(err), false
	}
	text = s
	if strings.TrimSpace(s) == "" {
		return nil, "", "", false
	}
	cur := []byte(s)
	for level := 0; level < 3; level++ {
		var v rawJSON
		if err := json.Unmarshal(cur, &v); err != nil {
			if level == 0 {
				return nil, text, shortErr(err), false
			}
			return compactJSON(prev(cur)), text, "", true
		}
		v = bytes.TrimSpace(v)
		if v[0] != '"' || level == 2 {
			return compactJSON(v), text, "", level > 0
		}
		var inner string
		if json.Unmarshal(v, &inner) != nil {
			return compactJSON(v), text, "", level > 0
		}
		cur = []byte(inner)
	}
	return nil, text, "", false
}

// parseUsageJSON is what parseUsage did with encoding/json: the oracle of
// FuzzParseUsage.
func parseUsageJSON(raw []byte) *Usage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	if raw[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil || len(list) == 0 {
			return nil
		}
		var sum Usage
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
	u := &Usage{
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

// FuzzNormalizeArgs: tool-call arguments (raw, a string, a string holding
// a string) read without encoding/json give what they gave with it.
func FuzzNormalizeArgs(f *testing.F) {
	for _, s := range []string{
		`{"path": "a"}`, `"{\"path\": \"a\"}"`, `"\"{\\\"a\\\": 1}\""`, `"\"\\\"x\\\"\""`,
		`"not json"`, `"\"not json\""`, `"  "`, `""`, `null`, ` "null" `, `"[1, 2 ,3]"`,
		`"{\"a\":"`, `"\ud800"`, "\"\xff\"", `"{\"a\":\"\\u2028<&>\"}"`, `[ 1 , {"b" : [ ] } ]`,
		`{"a":1`, `"\"\\\"\\\\\\\"deep\\\\\\\"\\\"\""`, `"5 "`, `"\t{}\n"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, txt, e, d := normalizeArgs(raw)
		wa, wtxt, we, wd := normalizeArgsJSON(raw)
		if !bytes.Equal(a, wa) || (a == nil) != (wa == nil) || txt != wtxt || e != we || d != wd {
			t.Fatalf("normalizeArgs(%q):\n got %q %q %q %v\nwant %q %q %q %v", raw, a, txt, e, d, wa, wtxt, we, wd)
		}
	})
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
