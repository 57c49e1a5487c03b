package suna

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// obj is a JSON object whose keys keep their order, as Python dicts do:
// the stream's frames are written key by key like Suna's json.dumps, and
// the REST bodies keep the same order (easier to read in a test failure).
type obj []kv

type kv struct {
	k string
	v any
}

// with returns o with k set (appended when new).
func (o obj) with(k string, v any) obj {
	for i := range o {
		if o[i].k == k {
			o[i].v = v
			return o
		}
	}
	return append(o, kv{k, v})
}

func (o obj) get(k string) any {
	for _, p := range o {
		if p.k == k {
			return p.v
		}
	}
	return nil
}

// MarshalJSON writes the REST form: ordinary JSON, UTF-8 kept.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(p.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// pyDumps writes v as Python's json.dumps does by default: ", " and ": "
// separators, every non-ASCII character escaped as \uXXXX (characters
// beyond the BMP as surrogate pairs), and NaN/Infinity written bare.
func pyDumps(v any) []byte {
	var b []byte
	return appendPy(b, v)
}

func appendPy(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		switch {
		case math.IsNaN(x):
			return append(b, "NaN"...)
		case math.IsInf(x, 1):
			return append(b, "Infinity"...)
		case math.IsInf(x, -1):
			return append(b, "-Infinity"...)
		}
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			return strconv.AppendFloat(b, x, 'f', 1, 64) // Python writes 3.0
		}
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case string:
		return appendPyString(b, x)
	case obj:
		b = append(b, '{')
		for i, p := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendPyString(b, p.k)
			b = append(b, ": "...)
			b = appendPy(b, p.v)
		}
		return append(b, '}')
	case []obj:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendPy(b, e)
		}
		return append(b, ']')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendPy(b, e)
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := make(obj, 0, len(keys))
		for _, k := range keys {
			o = append(o, kv{k, x[k]})
		}
		return appendPy(b, o)
	case json.RawMessage:
		return append(b, x...)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

const hexDigits = "0123456789abcdef"

func appendPyString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b = append(b, '\\', '"')
		case r == '\\':
			b = append(b, '\\', '\\')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r < 0x20 || (r > 0x7f && r < 0x10000):
			b = appendU(b, r)
		case r >= 0x10000:
			r1, r2 := utf16.EncodeRune(r)
			b = appendU(appendU(b, r1), r2)
		default:
			b = append(b, byte(r))
		}
	}
	return append(b, '"')
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
