package jsonx

import (
	"unicode/utf8"
)

// AppendString appends s as a JSON string exactly as encoding/json writes
// it with HTML escaping off (json.Encoder.SetEscapeHTML(false)): quotes,
// backslashes and control characters escaped (\b \f \n \r \t, else
// \u00XX), invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped, the rest
// as is. Runs that need nothing are found eight bytes at a time.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		i = specialOrHighString(s, i)
		if i >= len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			start = i + size
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			start = i + size
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// specialOrHighString is specialOrHighIn for a string.
func specialOrHighString(s string, i int) int { return specialOrHighIn(s, i) }

// AppendCompact appends raw, one valid JSON value, without the white space
// outside its strings: what encoding/json writes for a json.RawMessage
// with HTML escaping off. ok is false, and dst unchanged, when raw is not
// valid JSON (encoding/json then fails).
func AppendCompact(dst, raw []byte) ([]byte, bool) {
	if !Valid(raw) {
		return dst, false
	}
	start := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			end, _ := scanString(raw, i)
			i = end - 1
		case ' ', '\t', '\n', '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...), true
}
