package pyjson

import (
	"encoding/json"
	"math"
	"testing"
)

type pairs [][2]any

func (p pairs) Len() int                   { return len(p) }
func (p pairs) Member(i int) (string, any) { return p[i][0].(string), p[i][1] }

func TestDumps(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{pairs{{"b", 1}, {"a", "x"}}, `{"b": 1, "a": "x"}`},
		{pairs{}, `{}`},
		{[]any{math.NaN(), math.Inf(1), math.Inf(-1), 2.0, 0.0123, 1e-05, 1e16, nil, true, int64(-3)}, `[NaN, Infinity, -Infinity, 2.0, 0.0123, 1e-05, 1e+16, null, true, -3]`},
		{"é\u2028😀\"\\\n\r\t\b\f\x01\x7f", `"\u00e9\u2028\ud83d\ude00\"\\\n\r\t\b\f\u0001` + "\x7f" + `"`},
		{"bad \xff byte", `"bad \ufffd byte"`},
		{map[string]any{"z": 1, "a": []any{}}, `{"a": [], "z": 1}`},
		{json.RawMessage(`{"raw":true}`), `{"raw":true}`},
		{struct{ A int }{1}, `{"A":1}`},
		{[]pairs{{{"a", 1}}, {}}, `[{"a": 1}, {}]`},
		{[]string{"x", "é"}, `["x", "\u00e9"]`},
	} {
		if got := string(Dumps(c.v)); got != c.want {
			t.Errorf("Dumps(%#v) = %s, want %s", c.v, got, c.want)
		}
	}
}
