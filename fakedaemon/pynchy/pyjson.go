package pynchy

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// pynchy writes every JSON document with Python's json.dumps: ", " and
// ": " as separators, keys in insertion order, non-ASCII text escaped as
// \uXXXX (surrogate pairs above the BMP), and NaN / Infinity written bare.
// encoding/json can produce none of the last three, so the fake has its own
// small writer for the values it sends.

// kv is one member of an object, in order.
type kv struct {
	k string
	v any
}

// obj is a JSON object whose members keep their order.
type obj []kv

// get returns the value of key k (nil when absent).
func (o obj) get(k string) any {
	for _, m := range o {
		if m.k == k {
			return m.v
		}
	}
	return nil
}

// without returns o minus the members named in keys.
func (o obj) without(keys ...string) obj {
	out := make(obj, 0, len(o))
next:
	for _, m := range o {
		for _, k := range keys {
			if m.k == k {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// dumps encodes v as json.dumps does. Values are obj, []any, []obj,
// string, bool, nil, int, int64 and float64.
func dumps(v any) []byte { return appendPy(nil, v) }

func appendPy(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case string:
		return appendPyString(b, x)
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
		case x == math.Trunc(x) && math.Abs(x) < 1e16:
			return strconv.AppendFloat(b, x, 'f', 1, 64) // Python's repr: 2.0
		}
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case obj:
		b = append(b, '{')
		for i, m := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendPyString(b, m.k)
			b = append(b, ": "...)
			b = appendPy(b, m.v)
		}
		return append(b, '}')
	case []obj:
		l := make([]any, len(x))
		for i := range x {
			l[i] = x[i]
		}
		return appendPy(b, l)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendPy(b, e)
		}
		return append(b, ']')
	}
	panic("fake pynchy: no JSON form for a value of this type") // a bug in the fake's own scripts
}

const hexDigits = "0123456789abcdef"

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// appendPyString writes s with ensure_ascii: invalid UTF-8 becomes U+FFFD
// (Python strings cannot hold it).
func appendPyString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
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
		case r < 0x20 || (r > 0x7e && r < 0x10000):
			if r == 0x7f {
				b = append(b, byte(r))
				continue
			}
			b = appendU(b, r)
		case r >= 0x10000:
			r -= 0x10000
			b = appendU(b, 0xd800+(r>>10))
			b = appendU(b, 0xdc00+(r&0x3ff))
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}
