package events

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// unquote reads raw as exactly one JSON string (JSON white space around it
// allowed) in a single pass, with encoding/json's results: invalid UTF-8 and
// unpaired surrogates become U+FFFD. ok is false for anything else (another
// type, null, bad escapes, control characters, trailing data), in which case
// s is "". It replaces json.Unmarshal(raw, &s), which validates the bytes in
// a first pass and unquotes them in a second.
//
// The string is built in one allocation of its exact size: a tool output
// may be tens of megabytes, and building it in a buffer sized for the
// escaped text, or copying a buffer into a string, would cost more. A large
// one is measured by a first walk over it for that.
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
	size := len(body) + 2*utf8.UTFMax
	if len(body) >= 64<<10 {
		if size, ok = unescape(body, nil); !ok {
			return "", false
		}
	}
	var b strings.Builder
	b.Grow(size)
	if _, ok := unescape(body, &b); !ok {
		return "", false
	}
	return b.String(), true
}

// unescape walks the body of a JSON string, writing its value to b unless b
// is nil, and returns the value's length; ok is false for an invalid body.
func unescape(body []byte, b *strings.Builder) (n int, ok bool) {
	write := func(p []byte) {
		n += len(p)
		if b != nil {
			b.Write(p)
		}
	}
	writeByte := func(c byte) {
		n++
		if b != nil {
			b.WriteByte(c)
		}
	}
	writeRune := func(r rune) {
		n += utf8.RuneLen(r)
		if b != nil {
			b.WriteRune(r)
		}
	}
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '"' || c < 0x20:
			return 0, false
		case c == '\\':
			if i+1 >= len(body) {
				return 0, false
			}
			switch e := body[i+1]; e {
			case '"', '\\', '/':
				writeByte(e)
			case 'b':
				writeByte('\b')
			case 'f':
				writeByte('\f')
			case 'n':
				writeByte('\n')
			case 'r':
				writeByte('\r')
			case 't':
				writeByte('\t')
			case 'u':
				r := hex4(body[i+2:])
				if r < 0 {
					return 0, false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if len(body)-i >= 6 && body[i] == '\\' && body[i+1] == 'u' {
						if r2 := hex4(body[i+2:]); r2 >= 0 {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								writeRune(dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				writeRune(r)
				continue
			default:
				return 0, false
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
			write(body[i:j])
			i = j
		default:
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 {
				writeRune(utf8.RuneError)
			} else {
				write(body[i : i+size])
			}
			i += size
		}
	}
	return n, true
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
