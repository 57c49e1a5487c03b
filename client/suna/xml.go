package suna

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// xmlCall is one <invoke> of a legacy <function_calls> block.
type xmlCall struct {
	name string
	args json.RawMessage // a JSON object, parameters in their order
}

// parseXMLCalls finds the legacy XML tool calls in assistant text:
//
//	<function_calls><invoke name="web-search"><parameter name="query">x</parameter></invoke></function_calls>
//
// It returns the calls and the text with the blocks removed. ok is false
// when the text holds no block or a block does not parse (unclosed tags, an
// invoke without a name); the caller then keeps the text as it is.
func parseXMLCalls(s string) (calls []xmlCall, stripped string, ok bool) {
	lower := asciiLower(s)
	const open, close = "<function_calls>", "</function_calls>"
	if !strings.Contains(lower, open) {
		return nil, s, false
	}
	var rest strings.Builder
	pos := 0
	for {
		i := strings.Index(lower[pos:], open)
		if i < 0 {
			rest.WriteString(s[pos:])
			break
		}
		i += pos
		j := strings.Index(lower[i:], close)
		if j < 0 {
			return nil, s, false
		}
		j += i
		block, okBlock := parseBlock(s[i+len(open):j], lower[i+len(open):j])
		if !okBlock {
			return nil, s, false
		}
		calls = append(calls, block...)
		rest.WriteString(s[pos:i])
		pos = j + len(close)
	}
	return calls, strings.TrimSpace(rest.String()), true
}

// parseBlock reads the invokes of one block (lower is s in lower case).
func parseBlock(s, lower string) ([]xmlCall, bool) {
	var calls []xmlCall
	pos := 0
	for {
		i := strings.Index(lower[pos:], "<invoke")
		if i < 0 {
			// Only white space may be left between invokes.
			return calls, len(calls) > 0
		}
		i += pos
		name, bodyStart, ok := attrTag(s, i+len("<invoke"))
		if !ok || name == "" {
			return nil, false
		}
		end := strings.Index(lower[bodyStart:], "</invoke>")
		if end < 0 {
			return nil, false
		}
		end += bodyStart
		args, ok := parseParams(s[bodyStart:end], lower[bodyStart:end])
		if !ok {
			return nil, false
		}
		calls = append(calls, xmlCall{name: strings.ReplaceAll(name, "-", "_"), args: args})
		pos = end + len("</invoke>")
	}
}

// attrTag reads ` name="x">` after a tag's name at s[i:]: the attribute's
// value and where the tag's body starts.
func attrTag(s string, i int) (name string, body int, ok bool) {
	rest := s[i:]
	trimmed := strings.TrimLeft(rest, " \t\r\n")
	if len(trimmed) == len(rest) || !strings.HasPrefix(asciiLower(trimmed[:min(len(trimmed), 5)]), "name=") {
		return "", 0, false
	}
	i += len(rest) - len(trimmed) + len("name=")
	if i >= len(s) || (s[i] != '"' && s[i] != '\'') {
		return "", 0, false
	}
	q := s[i]
	j := strings.IndexByte(s[i+1:], q)
	if j < 0 {
		return "", 0, false
	}
	name = s[i+1 : i+1+j]
	k := i + 1 + j + 1
	if k >= len(s) || s[k] != '>' {
		return "", 0, false
	}
	return name, k + 1, true
}

// parseParams reads the <parameter> elements of an invoke into an object.
func parseParams(s, lower string) (json.RawMessage, bool) {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	seen := map[string]int{}
	var values []json.RawMessage
	var names []string
	pos := 0
	for {
		i := strings.Index(lower[pos:], "<parameter")
		if i < 0 {
			break
		}
		i += pos
		name, bodyStart, ok := attrTag(s, i+len("<parameter"))
		if !ok {
			return nil, false
		}
		end := strings.Index(lower[bodyStart:], "</parameter>")
		if end < 0 {
			return nil, false
		}
		end += bodyStart
		v := paramValue(s[bodyStart:end])
		if k, dup := seen[name]; dup {
			values[k] = v // a repeated name: the last one wins, as in a map
		} else {
			seen[name] = len(names)
			names = append(names, name)
			values = append(values, v)
		}
		pos = end + len("</parameter>")
	}
	for k, name := range names {
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(quote(name))
		b.WriteByte(':')
		b.Write(values[k])
		n++
	}
	b.WriteByte('}')
	return b.Bytes(), true
}

// paramValue types a parameter's text the way Suna does: JSON objects and
// arrays, booleans and plain numbers are values, anything else a string.
func paramValue(v string) json.RawMessage {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") {
		if json.Valid([]byte(v)) {
			var c bytes.Buffer
			_ = json.Compact(&c, []byte(v))
			return c.Bytes()
		}
	}
	switch strings.ToLower(v) {
	case "true":
		return json.RawMessage("true")
	case "false":
		return json.RawMessage("false")
	}
	if plainNumber(v) {
		if strings.Contains(v, ".") {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return json.RawMessage(strconv.FormatFloat(f, 'f', -1, 64))
			}
		} else if i, err := strconv.ParseInt(v, 10, 64); err == nil {
			return json.RawMessage(strconv.FormatInt(i, 10))
		}
	}
	return quote(v)
}

// quote is s as a JSON string, without HTML escapes.
func quote(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(valid(s))
	return bytes.TrimRight(b.Bytes(), "\n")
}

// plainNumber: an optional minus, digits and at most one dot, no leading
// zero (so "007" and "1e5" stay text).
func plainNumber(v string) bool {
	if strings.HasPrefix(v, "-") {
		v = v[1:]
	}
	if v == "" || v[0] == '.' || v[len(v)-1] == '.' {
		return false
	}
	if len(v) > 1 && v[0] == '0' && v[1] != '.' {
		return false
	}
	dots := 0
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '.':
			dots++
		case v[i] < '0' || v[i] > '9':
			return false
		}
	}
	return dots <= 1 && len(v) <= 18
}

// asciiLower lowers ASCII letters only, so that byte offsets in the result
// are offsets in s (strings.ToLower may change lengths).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
