package events

import (
	"unicode/utf16"
	"unicode/utf8"
)

// unquote reads raw as exactly one JSON string (JSON white space around it
// allowed) in a single pass, with encoding/json's results: invalid UTF-8 and
// unpaired surrogates become U+FFFD. ok is false for anything else (another
// type, null, bad escapes, control characters, trailing data), in which case
// s is "". It replaces json.Unmarshal(raw, &s), which validates the bytes in
// a first pass and unquotes them in a second.
func unquote(raw []byte) (s string, ok bool) {
	for len(raw) > 0 && isJSONSpace(raw[0]) {
		raw = raw[1:]
	}
	for len(raw) > 0 && isJSONSpace(raw[len(raw)-1]) {
		raw = raw[:len(raw)-1]
	}
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	// Fast path: plain ASCII needs no rewriting.
	i := 0
	for i < len(body) {
		c := body[i]
		if c == '\\' || c == '"' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	if i == len(body) {
		return string(body), true
	}
	b := make([]byte, i, len(body)+2*utf8.UTFMax)
	copy(b, body[:i])
	for i < len(body) {
		c := body[i]
		switch {
		case c == '"' || c < 0x20:
			return "", false
		case c == '\\':
			if i+1 >= len(body) {
				return "", false
			}
			switch e := body[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hex4(body[i+2:])
				if r < 0 {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if len(body)-i >= 6 && body[i] == '\\' && body[i+1] == 'u' {
						if r2 := hex4(body[i+2:]); r2 >= 0 {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								b = utf8.AppendRune(b, dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c < utf8.RuneSelf:
			// A run of plain ASCII.
			j := i + 1
			for j < len(body) {
				c := body[j]
				if c == '\\' || c == '"' || c < 0x20 || c >= utf8.RuneSelf {
					break
				}
				j++
			}
			b = append(b, body[i:j]...)
			i = j
		default:
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, body[i:i+size]...)
			}
			i += size
		}
	}
	return string(b), true
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// hex4 reads the four hex digits of a \u escape, or -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
