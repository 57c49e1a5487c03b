package transcript

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// FuzzRecord: the writer's records are byte for byte what json.Encoder
// (HTML escaping off) writes, compact and indented, and it fails exactly
// on the records json.Encoder fails on.
func FuzzRecord(f *testing.F) {
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
		for _, indent := range []string{"", "  "} {
			var want, got bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			prefix := ""
			if indent != "" {
				prefix = "    " // an element of "items"
				enc.SetIndent(prefix, indent)
			}
			err := enc.Encode(r)
			e := newRecordEncoder(&got, indent)
			gotErr := e.record(&r, prefix)
			e.w.Flush()
			if (gotErr == nil) != (err == nil) {
				t.Fatalf("indent %q: error %v, encoding/json: %v", indent, gotErr, err)
			}
			if err == nil && got.String()+"\n" != want.String() {
				t.Fatalf("indent %q: got\n%s\nwant\n%s", indent, got.String(), want.String())
			}
		}
	})
}
