package transcript

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// FuzzAppendRecord: the JSONL writer's records are byte for byte what
// json.Encoder (HTML escaping off) writes, and it declines exactly the
// records json.Encoder fails on.
func FuzzAppendRecord(f *testing.F) {
	f.Add("assistant", "a\"b\n<&>\u2028\xff", []byte(`{"a": [1, 2]}`), int64(42), 0.0031, uint32(0xffffffff))
	f.Add("tool", "", []byte(`not json`), int64(-1), math.NaN(), uint32(0x5555))
	f.Add("state", "x", []byte(nil), int64(0), 1e-7, uint32(0xaaaa))
	f.Add("notice", "日本", []byte(" \"s\" "), int64(1<<40), 1e21, uint32(0x1234))
	f.Fuzz(func(t *testing.T, typ, s string, raw []byte, n int64, cost float64, flags uint32) {
		on := func(bit uint) bool { return flags&(1<<bit) != 0 }
		sp := func(bit uint, v string) *string {
			if on(bit) {
				return &v
			}
			return nil
		}
		r := Record{Type: typ, ID: sp(0, s), Level: sp(1, s+"l"), Kind: sp(2, "k"+s), Text: sp(3, s),
			Thinking: sp(4, s), StopReason: sp(5, s), Name: sp(6, s), Status: sp(7, s), Output: sp(8, s)}
		if on(9) {
			calls := []Call{}
			if on(10) {
				calls = append(calls, Call{ID: s, Name: "n", Arguments: raw}, Call{ID: "2", Name: s})
			}
			if on(11) {
				calls = nil
			}
			r.ToolCalls = &calls
		}
		if on(12) {
			u := &Usage{InputTokens: n, OutputTokens: -n, CachedTokens: n / 3}
			if on(13) {
				u.CacheWriteTokens = &n
			}
			if on(14) {
				u.ReasoningTokens = &n
			}
			if on(15) {
				u.CostUSD = &cost
			}
			r.Usage = u
		}
		if on(16) {
			r.Incomplete = new(bool)
			*r.Incomplete = on(17)
		}
		if on(18) {
			a := json.RawMessage(raw)
			r.Args = &a
		}
		if on(19) {
			e := int(n)
			r.ExitCode = &e
		}
		if on(20) {
			q := []Queued{{ID: s, Text: s}}
			if on(21) {
				q = nil
			}
			r.Queue = &q
		}
		if on(22) {
			td := []Todo{{ID: "1", Content: s, Status: "pending", Priority: s}, {}}
			if on(23) {
				td = nil
			}
			r.Todos = &td
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		err := enc.Encode(r)
		got, ok := appendRecord(nil, &r)
		if ok != (err == nil) {
			t.Fatalf("ok %v, encoding/json: %v", ok, err)
		}
		if ok && string(got)+"\n" != want.String() {
			t.Fatalf("got\n%s\nwant\n%s", got, want.String())
		}
	})
}
