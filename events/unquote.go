package events

import (
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
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
		m := sink{count: true}
		if !unescape(body, &m) {
			return "", false
		}
		size = m.n
	}
	out := sink{buf: make([]byte, 0, size)}
	if !unescape(body, &out) {
		return "", false
	}
	// out.buf is not used again: the string can share it.
	return unsafe.String(unsafe.SliceData(out.buf), len(out.buf)), true
}

// sink takes a string's value as unescape finds it: it appends to buf, or
// with count only adds up its length in n. It lives in its caller's frame:
// a tool output with an escape on every line makes millions of small
// writes, and a strings.Builder's writes each store its slice in the heap
// (a write barrier while the collector runs).
type sink struct {
	buf   []byte
	n     int
	count bool
}

func (s *sink) write(p []byte) {
	s.n += len(p)
	if !s.count {
		s.buf = append(s.buf, p...)
	}
}

func (s *sink) writeByte(c byte) {
	s.n++
	if !s.count {
		s.buf = append(s.buf, c)
	}
}

func (s *sink) writeRune(r rune) {
	s.n += utf8.RuneLen(r)
	if !s.count {
		s.buf = utf8.AppendRune(s.buf, r)
	}
}

// unescape walks the body of a JSON string into b; it reports false for an
// invalid body.
func unescape(body []byte, b *sink) bool {
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '"' || c < 0x20:
			return false
		case c == '\\':
			if i+1 >= len(body) {
				return false
			}
			switch e := body[i+1]; e {
			case '"', '\\', '/':
				b.writeByte(e)
			case 'b':
				b.writeByte('\b')
			case 'f':
				b.writeByte('\f')
			case 'n':
				b.writeByte('\n')
			case 'r':
				b.writeByte('\r')
			case 't':
				b.writeByte('\t')
			case 'u':
				r := hex4(body[i+2:])
				if r < 0 {
					return false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if len(body)-i >= 6 && body[i] == '\\' && body[i+1] == 'u' {
						if r2 := hex4(body[i+2:]); r2 >= 0 {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								b.writeRune(dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				b.writeRune(r)
				continue
			default:
				return false
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
			b.write(body[i:j])
			i = j
		default:
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 {
				b.writeRune(utf8.RuneError)
			} else {
				b.write(body[i : i+size])
			}
			i += size
		}
	}
	return true
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
