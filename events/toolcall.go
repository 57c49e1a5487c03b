package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/perch-tui/perch/internal/jsonx"
)

// NewToolCall is a ToolCall with its arguments normalized (see
// NormalizeArgs).
func NewToolCall(id, name string, rawArgs json.RawMessage) ToolCall {
	c := ToolCall{ID: id, Name: name}
	c.Args, c.ArgsRaw, c.ArgsErr, c.DoubleEncoded = NormalizeArgs(rawArgs)
	// Raw bytes of an argument object may hold invalid UTF-8 that a JSON
	// string never does; keep the text valid.
	c.ArgsRaw = strings.ToValidUTF8(c.ArgsRaw, "\uFFFD")
	return c
}

// NormalizeArgs turns tool-call arguments as any system sends them (a JSON
// string, an object, a double-encoded string, empty, absent or invalid)
// into a ToolCall's Args, ArgsRaw (the text), ArgsErr and DoubleEncoded.
// It never fails: invalid arguments are kept raw with the reason.
func NormalizeArgs(raw []byte) (args json.RawMessage, text, errText string, double bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || jsonx.IsNull(raw) {
		return nil, "", "", false
	}
	if raw[0] != '"' {
		return jsonx.Compact(raw), string(raw), "", false
	}
	s, ok := jsonx.Unquote(raw)
	if !ok {
		err := json.Unmarshal(raw, new(string)) // only to say why
		if err == nil {
			err = errors.New("not a JSON string")
		}
		return nil, string(raw), shortErr(err), false
	}
	text = s
	if strings.TrimSpace(s) == "" {
		return nil, "", "", false
	}
	// Up to two extra levels of string encoding are undone.
	cur := []byte(s)
	for level := 0; level < 3; level++ {
		// A valid value is cur without the JSON white space around it,
		// what json.Unmarshal into a jsonx.Raw hands over (a valid value
		// neither starts nor ends with other space); encoding/json is
		// asked only to say what is wrong with an invalid one.
		if !jsonx.Valid(cur) {
			if level == 0 {
				var v jsonx.Raw
				err := json.Unmarshal(cur, &v)
				if err == nil {
					err = errors.New("not valid JSON")
				}
				return nil, text, shortErr(err), false
			}
			// A string that holds a string that isn't JSON: that's the value.
			return jsonx.Compact(prev(cur)), text, "", true
		}
		v := bytes.TrimSpace(cur) // a slice of cur; compact copies what is kept
		if v[0] != '"' || level == 2 {
			return jsonx.Compact(v), text, "", level > 0
		}
		inner, ok := jsonx.Unquote(v) // as json.Unmarshal into a string
		if !ok {
			return jsonx.Compact(v), text, "", level > 0
		}
		cur = []byte(inner)
	}
	return nil, text, "", false
}

// prev re-encodes a string value that turned out not to hold JSON.
func prev(s []byte) json.RawMessage {
	b, _ := json.Marshal(string(s))
	return b
}

func shortErr(err error) string { return Excerpt([]byte(err.Error()), 120) }
