// Package pyjson writes JSON as Python's json.dumps does by default, for
// the fake servers of systems written in Python (Suna, pynchy): ", " and
// ": " as separators, keys in insertion order, every non-ASCII character
// escaped as \uXXXX (surrogate pairs beyond the BMP), and NaN / Infinity
// written bare. encoding/json can produce none of the last three, and
// perch's decoders must read what those servers really send.
package pyjson

import (
	"encoding/json"
	"math"
	"reflect"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Object is a JSON object whose members keep their order (a Python dict).
type Object interface {
	Len() int
	Member(i int) (key string, value any)
}

// Dumps encodes v as json.dumps does. Values are Objects, slices of any
// of these, map[string]any (keys sorted), string, bool, nil,
// int, int64, float64 and json.RawMessage (written as it is); anything
// else goes through encoding/json.
func Dumps(v any) []byte { return Append(nil, v) }

// Append appends v as Dumps writes it.
func Append(b []byte, v any) []byte {
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
		return appendFloat(b, x)
	case string:
		return AppendString(b, x)
	case Object:
		b = append(b, '{')
		for i := range x.Len() {
			if i > 0 {
				b = append(b, ", "...)
			}
			k, v := x.Member(i)
			b = AppendString(b, k)
			b = append(b, ": "...)
			b = Append(b, v)
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = Append(b, e)
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = AppendString(b, k)
			b = append(b, ": "...)
			b = Append(b, x[k])
		}
		return append(b, '}')
	case json.RawMessage:
		return append(b, x...)
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
		// Other slices ([]obj, []string): element by element.
		b = append(b, '[')
		for i := range rv.Len() {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = Append(b, rv.Index(i).Interface())
		}
		return append(b, ']')
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

// appendFloat writes x as Python's float repr: 3.0 for whole numbers,
// the shortest form otherwise, NaN and ±Infinity bare.
func appendFloat(b []byte, x float64) []byte {
	switch {
	case math.IsNaN(x):
		return append(b, "NaN"...)
	case math.IsInf(x, 1):
		return append(b, "Infinity"...)
	case math.IsInf(x, -1):
		return append(b, "-Infinity"...)
	case x == math.Trunc(x) && math.Abs(x) < 1e16:
		return strconv.AppendFloat(b, x, 'f', 1, 64)
	}
	return strconv.AppendFloat(b, x, 'g', -1, 64)
}

const hexDigits = "0123456789abcdef"

// AppendString writes s with ensure_ascii. Invalid UTF-8 becomes U+FFFD
// (a Python str cannot hold it); DEL stays raw, as Python leaves it.
func AppendString(b []byte, s string) []byte {
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
		case r < 0x20 || (r > 0x7f && r < 0x10000):
			b = appendU(b, r)
		case r >= 0x10000:
			r1, r2 := utf16.EncodeRune(r)
			b = appendU(appendU(b, r1), r2)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
