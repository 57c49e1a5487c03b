// Package normalize turns the JSON shapes that agent systems and model
// providers share (message content in its many forms, usage records, stop
// reasons, lenient numbers and booleans) into perch's event vocabulary.
// Every system's decoder uses it, so that one shape means one thing
// everywhere. Nothing here fails: odd input gives the best reading and,
// where it matters, says so.
package normalize

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/internal/jsonx"
)

// Object is a JSON object with its fields kept raw.
type Object = map[string]json.RawMessage

// AsObject decodes raw as an object (nil when it is not one). Its values
// are a copy: they stay valid when raw's memory is reused.
func AsObject(raw json.RawMessage) Object {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	o, _ := jsonx.Object(bytes.Clone(raw))
	return o
}

// AsList decodes raw as an array (nil when it is not one; an empty array is
// an empty list). Its elements are a copy, as AsObject's values.
func AsList(raw json.RawMessage) []json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil
	}
	l, _ := jsonx.List(bytes.Clone(raw))
	return l
}

// AsObjectShared is AsObject without the copy: its values share raw's
// memory. It is for raw that stays as it is while they are used (a value
// that AsObject or AsList returned, a buffer of its own); a value kept
// keeps all of raw's memory alive.
func AsObjectShared(raw json.RawMessage) Object { return object(raw) }

// AsListShared is AsList without the copy, as AsObjectShared.
func AsListShared(raw json.RawMessage) []json.RawMessage { return list(raw) }

// object and list are AsObject and AsList for values read in place: their
// members share raw's memory.
func object(raw json.RawMessage) Object {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	o, _ := jsonx.Object(raw)
	return o
}

func list(raw json.RawMessage) []json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil
	}
	l, _ := jsonx.List(raw)
	return l
}

// Str reads a JSON string ("" for anything else).
func Str(raw json.RawMessage) string {
	s, _ := jsonx.Unquote(raw)
	return s
}

// StrField reads o[key] as a string.
func StrField(o Object, key string) string { return Str(o[key]) }

// FirstStr is the first of o's keys that holds a non-empty string.
func FirstStr(o Object, keys ...string) string {
	for _, k := range keys {
		if s := Str(o[k]); s != "" {
			return s
		}
	}
	return ""
}

// IsNull reports raw is absent or JSON null.
func IsNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// Built is the text of b, for keeping: when b's buffer grew well past its
// text (a builder doubles as it goes), the text is copied to memory of its
// own size, so that the slack is not kept with it.
func Built(b *strings.Builder) string {
	if b.Cap()-b.Len() > b.Len()/8 {
		return strings.Clone(b.String())
	}
	return b.String()
}

// Int reads an integer leniently: a number, a float with no fraction
// beyond rounding, or a numeric string. ok is false for anything else
// (including null, NaN and values out of range), which means unknown.
func Int(raw json.RawMessage) (int64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false
	}
	s := string(raw)
	if raw[0] == '"' {
		s = strings.TrimSpace(Str(raw))
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f > 1e15 || f < -1e15 {
		return 0, false
	}
	return int64(math.Round(f)), true
}

// Float reads a number leniently (ok false when unknown).
func Float(raw json.RawMessage) (float64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false
	}
	s := string(raw)
	if raw[0] == '"' {
		s = strings.TrimSpace(Str(raw))
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// Bool reads a boolean leniently: true/false, 1/0, and the strings
// true/false/yes/no/1/0 in any case. ok is false when unknown.
func Bool(raw json.RawMessage) (v, ok bool) {
	raw = bytes.TrimSpace(raw)
	switch string(raw) {
	case "true", "1":
		return true, true
	case "false", "0":
		return false, true
	}
	if len(raw) > 0 && raw[0] == '"' {
		switch strings.ToLower(strings.TrimSpace(Str(raw))) {
		case "true", "yes", "1", "y":
			return true, true
		case "false", "no", "0", "n":
			return false, true
		}
	}
	return false, false
}

// Unwrap returns the object a JSON string holds, but only when that object
// is message-shaped: it has one of keys. Plain text that happens to be
// JSON stays text, so user text can never change a role. An object is
// returned as is.
func Unwrap(raw json.RawMessage, keys ...string) Object {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '{' {
		return AsObject(raw)
	}
	if raw[0] != '"' {
		return nil
	}
	inner := strings.TrimSpace(Str(raw))
	if !strings.HasPrefix(inner, "{") {
		return nil
	}
	o := object(ingest.Repair([]byte(inner))) // a buffer of its own
	for _, k := range keys {
		if _, ok := o[k]; ok {
			return o
		}
	}
	return nil
}
