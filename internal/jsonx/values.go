package jsonx

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Raw is a JSON value left where it is. json.Unmarshal hands an
// Unmarshaler a slice of its own input, so a field of this type costs no
// copy, where json.RawMessage copies: a record that carries a large text
// twice is not copied twice before either is read. A Raw is only valid
// while the input is: what a decoder keeps must be copied out of it
// (Unquote, Compact, json.Unmarshal).
type Raw []byte

// UnmarshalJSON keeps b as it is.
func (r *Raw) UnmarshalJSON(b []byte) error { *r = b; return nil }

// IsNull reports whether raw is JSON null (white space around it allowed).
func IsNull(raw []byte) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// String reads a JSON string, or "" for anything else.
func String(raw []byte) string {
	s, _ := Unquote(raw)
	return s
}

// Int reads an integer leniently: a number, a float or a numeric string;
// anything else is 0.
func Int(raw []byte) int64 {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	s := string(raw)
	if raw[0] == '"' {
		var ok bool
		if s, ok = Unquote(raw); !ok {
			return 0
		}
	}
	if i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && f < 1e18 && f > -1e18 {
		return int64(f)
	}
	return 0
}

// ID reads an id that should be a string but may be a number, as text; ""
// for anything else.
func ID(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || IsNull(raw) {
		return ""
	}
	if raw[0] == '"' {
		return String(raw)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// Compact is raw without the white space outside its strings, as
// json.Compact writes it, or a copy of raw when it is not valid JSON.
func Compact(raw []byte) json.RawMessage {
	if b, ok := AppendCompact(make([]byte, 0, len(raw)), raw); ok {
		return b
	}
	return append(json.RawMessage(nil), raw...)
}
