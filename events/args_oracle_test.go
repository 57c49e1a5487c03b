package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/perch-tui/perch/internal/jsonx"
)

// normalizeArgsJSON is what NormalizeArgs did with encoding/json (a
// validating and a decoding pass per level, json.Compact): the oracle of
// FuzzNormalizeArgs.
func normalizeArgsJSON(raw []byte) (args json.RawMessage, text, errText string, double bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || jsonx.IsNull(raw) {
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
		var v jsonx.Raw
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
		a, txt, e, d := NormalizeArgs(raw)
		wa, wtxt, we, wd := normalizeArgsJSON(raw)
		if !bytes.Equal(a, wa) || (a == nil) != (wa == nil) || txt != wtxt || e != we || d != wd {
			t.Fatalf("NormalizeArgs(%q):\n got %q %q %q %v\nwant %q %q %q %v", raw, a, txt, e, d, wa, wtxt, we, wd)
		}
	})
}

func TestNormalizeArgs(t *testing.T) {
	cases := []struct {
		name, raw, args, text string
		errSet, double        bool
	}{
		{"json string", `"{\"path\": \"a\"}"`, `{"path":"a"}`, `{"path": "a"}`, false, false},
		{"object", `{"path":"a"}`, `{"path":"a"}`, `{"path":"a"}`, false, false},
		{"double encoded", `"\"{\\\"query\\\": \\\"x\\\"}\""`, `{"query":"x"}`, `"{\"query\": \"x\"}"`, false, true},
		{"empty string", `""`, ``, ``, false, false},
		{"blank string", `"   "`, ``, ``, false, false},
		{"null", `null`, ``, ``, false, false},
		{"absent", ``, ``, ``, false, false},
		{"invalid", `"{\"query\": \"x\""`, ``, `{"query": "x"`, true, false},
		{"scalar", `"42"`, `42`, `42`, false, false},
		{"array", `"[1,2]"`, `[1,2]`, `[1,2]`, false, false},
		{"string holding plain text", `"\"hello\""`, `"hello"`, `"hello"`, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args, text, errText, double := NormalizeArgs(json.RawMessage(c.raw))
			if string(args) != c.args || text != c.text || (errText != "") != c.errSet || double != c.double {
				t.Fatalf("got args=%s text=%q err=%q double=%v", args, text, errText, double)
			}
		})
	}
}
