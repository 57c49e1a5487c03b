package ingest

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParsePy(t *testing.T) {
	for in, want := range map[string]any{
		`'it\'s'`:                               "it's",
		`"don't\n\u00e9\x41"`:                   "don't\néA",
		` None `:                                nil,
		`[1, True, (2,)]`:                       []any{json.Number("1"), true, []any{json.Number("2")}},
		`{'a': {'b': -1.5}}`:                    map[string]any{"a": map[string]any{"b": json.Number("-1.5")}},
		`ToolResult(success=False, output='x')`: PyCall{Name: "ToolResult", Keys: []string{"success", "output"}, Vals: []any{false, "x"}},
	} {
		got, ok := ParsePy(in)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("ParsePy(%s) = %#v, %v; want %#v", in, got, ok, want)
		}
	}
	for _, in := range []string{``, `'open`, `[1,`, `x = 1`, `'a' 'b'`, `ToolResult(success=True) trailing`} {
		if v, ok := ParsePy(in); ok {
			t.Errorf("ParsePy(%s) = %#v, want not a literal", in, v)
		}
	}
	c, _ := ParsePy(`R(a=1, b='2')`)
	if v, ok := c.(PyCall).Arg("b"); !ok || v != "2" {
		t.Errorf("Arg(b) = %v, %v", v, ok)
	}
	if _, ok := c.(PyCall).Arg("z"); ok {
		t.Error("Arg(z) found")
	}
}
