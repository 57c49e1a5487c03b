package fakedaemon

import (
	"bytes"
	"encoding/json"
	"strings"
)

// field is one key/value pair of an ordered JSON object.
type field struct {
	k string
	v any
}

// obj is a JSON object whose keys keep their insertion order. The real daemon
// writes keys in declaration order, and clients (or golden tests) may compare
// bytes, so Go's map ordering is not good enough.
type obj []field

// o builds an obj from alternating keys and values.
func o(kv ...any) obj {
	out := make(obj, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, field{kv[i].(string), kv[i+1]})
	}
	return out
}

// with returns a copy of the object with more fields appended.
func (m obj) with(kv ...any) obj {
	out := make(obj, 0, len(m)+len(kv)/2)
	out = append(out, m...)
	return append(out, o(kv...)...)
}

// MarshalJSON writes the fields in order, compactly.
func (m obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := encode(f.k)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := encodeValue(f.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encode marshals compactly without HTML escaping: MoonBit's Json::stringify
// leaves '<', '>' and '&' alone, and tool output (diffs, compiler errors) is
// full of them.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// encodeValue is encode, except that an obj writes itself directly: going
// through encoding/json would validate and re-compact its (already compact)
// bytes once per level of nesting, which dominates for multi-megabyte tool
// outputs. The bytes are the same.
func encodeValue(v any) ([]byte, error) {
	if m, ok := v.(obj); ok {
		return m.MarshalJSON()
	}
	return encode(v)
}

// mustJSON is encode for values built by this package, which always
// marshal; a failure is a programming error, reported inside the JSON rather
// than by panicking in a request handler.
func mustJSON(v any) []byte {
	b, err := encodeValue(v)
	if err != nil {
		b, _ = encode(o("error", o("code", -1, "message", "fakedaemon: marshal: "+err.Error())))
	}
	return b
}

// prettyJSON is the 2-space indented form used only by POST /v1/task 201.
func prettyJSON(v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(v); err != nil {
		return mustJSON(v)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// argString renders tool-call arguments the way the models in the examples
// do: a JSON object with a space after each colon and comma
// ({"command": "go test ./...", "timeout": 600000}).
func argString(m obj) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range m {
		if i > 0 {
			b.WriteString(", ")
		}
		b.Write(mustJSON(f.k))
		b.WriteString(": ")
		b.Write(mustJSON(f.v))
	}
	b.WriteByte('}')
	return b.String()
}

// frame renders one SSE frame exactly as §5.1: one event line, one data line
// (compact JSON never contains a raw newline), a blank line.
func frame(event string, data []byte) []byte {
	b := make([]byte, 0, len(event)+len(data)+16)
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	return b
}

// daemonError is the daemon's error body (§2.1).
func daemonError(message string, metadata obj) []byte {
	e := o("code", -1, "message", message)
	if metadata != nil {
		e = e.with("metadata", metadata)
	}
	return mustJSON(o("error", e))
}

// jsonError is the JsonError body (§2.1): code equals the HTTP status and the
// extra field is "data".
func jsonError(status int, message string) []byte {
	return mustJSON(o("error", o("code", status, "message", message, "data", obj{})))
}
