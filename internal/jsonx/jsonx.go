// Package jsonx reads JSON in one pass, with encoding/json's verdicts: it
// validates a value, splits an object or an array into its raw members and
// unquotes strings. encoding/json validates the whole input before it
// decodes, byte by byte through a state machine, so a decoder that reads a
// record in layers (an object, then one of its members, then a string)
// scans its big strings many times over; these functions scan them once,
// eight bytes at a time, and agree with encoding/json on what is valid and
// on every value they return.
package jsonx

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is encoding/json's limit on nested objects and arrays.
const maxDepth = 10000

// Valid reports whether data is exactly one JSON value (white space around
// it allowed), as json.Valid does.
func Valid(data []byte) bool {
	i := skipSpace(data, 0)
	end, ok := skipValue(data, i, 0)
	return ok && skipSpace(data, end) == len(data)
}

// Object splits raw, exactly one JSON object (JSON white space around it
// allowed), into its members as json.Unmarshal into a
// map[string]json.RawMessage does: keys unquoted, the last of duplicate
// keys kept, each value its bytes without the white space around them. ok
// is false when raw is anything else or not valid JSON. The values share
// raw's memory.
func Object(raw []byte) (m map[string]json.RawMessage, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	m = make(map[string]json.RawMessage, 8)
	end, ok := members(raw, i, 1, func(key string, v []byte) { m[key] = v })
	if !ok || skipSpace(raw, end) != len(raw) {
		return nil, false
	}
	return m, true
}

// Members calls fn with each member of raw, exactly one JSON object (JSON
// white space around it allowed), in order, after checking that the whole
// of raw is valid; it reports false, without calling fn, when it is not.
// Values share raw's memory.
func Members(raw []byte, fn func(key string, value []byte)) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	type member struct {
		key   string
		value []byte
	}
	var buf [16]member
	all := buf[:0]
	end, ok := members(raw, i, 1, func(k string, v []byte) { all = append(all, member{k, v}) })
	if !ok || skipSpace(raw, end) != len(raw) {
		return false
	}
	for _, m := range all {
		fn(m.key, m.value)
	}
	return true
}

// CheckedMembers calls fn with each member of raw, one JSON object that
// has been checked already (a value that Members, Object or List handed
// out, or input Valid accepted), in order, as Members would, without
// checking it again: its strings — a tool's whole output, say — are
// skipped with bytes.IndexByte rather than read byte by byte a second
// time. Given input that was not checked it may stop early or hand out
// odd members, but it never panics. Values share raw's memory.
func CheckedMembers(raw []byte, fn func(key string, value []byte)) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return
	}
	i = skipSpace(raw, i+1)
	for i < len(raw) && raw[i] == '"' {
		key, kend, ok := unquoteAt(raw, i) // keys are short: checked as read
		if !ok {
			return
		}
		i = skipSpace(raw, kend)
		if i >= len(raw) || raw[i] != ':' {
			return
		}
		i = skipSpace(raw, i+1)
		if i >= len(raw) {
			return
		}
		vend := checkedValue(raw, i)
		fn(key, raw[i:vend:vend])
		i = skipSpace(raw, vend)
		if i >= len(raw) || raw[i] != ',' {
			return
		}
		i = skipSpace(raw, i+1)
	}
}

// checkedString returns the index after the checked string at raw[i]
// ('"'), len(raw) when it does not end.
func checkedString(raw []byte, i int) int {
	for j := i + 1; ; j++ {
		k := bytes.IndexByte(raw[j:], '"')
		if k < 0 {
			return len(raw)
		}
		j += k
		// The quote ends the string unless an odd run of backslashes
		// escapes it.
		n := 0
		for p := j - 1; p > i && raw[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
	}
}

// checkedValue returns the index after the checked value at raw[i].
func checkedValue(raw []byte, i int) int {
	switch raw[i] {
	case '"':
		return checkedString(raw, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(raw); {
			switch raw[j] {
			case '"':
				j = checkedString(raw, j)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return len(raw)
	}
	j := i + 1 // a number or a literal
	for j < len(raw) {
		switch raw[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}

// List splits raw, exactly one JSON array (JSON white space around it
// allowed), into its elements as json.Unmarshal into a []json.RawMessage
// does: an empty array is an empty, non-nil list. ok is false when raw is
// anything else or not valid JSON. The elements share raw's memory.
func List(raw []byte) (l []json.RawMessage, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	l = []json.RawMessage{}
	end, ok := elements(raw, i, 1, func(v []byte) { l = append(l, v) })
	if !ok || skipSpace(raw, end) != len(raw) {
		return nil, false
	}
	return l, true
}

// members reads the object at raw[i] ('{'), calling fn for each member,
// and returns the index after it.
func members(raw []byte, i, depth int, fn func(string, []byte)) (int, bool) {
	if depth > maxDepth {
		return 0, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return 0, false
		}
		key, kend, ok := unquoteAt(raw, i)
		if !ok {
			return 0, false
		}
		i = skipSpace(raw, kend)
		if i >= len(raw) || raw[i] != ':' {
			return 0, false
		}
		i = skipSpace(raw, i+1)
		vend, ok := skipValue(raw, i, depth)
		if !ok {
			return 0, false
		}
		fn(key, raw[i:vend:vend])
		i = skipSpace(raw, vend)
		if i >= len(raw) {
			return 0, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// elements reads the array at raw[i] ('['), calling fn for each element.
func elements(raw []byte, i, depth int, fn func([]byte)) (int, bool) {
	if depth > maxDepth {
		return 0, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return i + 1, true
	}
	for {
		vend, ok := skipValue(raw, i, depth)
		if !ok {
			return 0, false
		}
		fn(raw[i:vend:vend])
		i = skipSpace(raw, vend)
		if i >= len(raw) {
			return 0, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case ']':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// skipValue checks the value at raw[i] and returns the index after it.
// depth is the number of arrays and objects around it.
func skipValue(raw []byte, i, depth int) (int, bool) {
	if i >= len(raw) {
		return 0, false
	}
	switch c := raw[i]; {
	case c == '"':
		return scanString(raw, i)
	case c == '{':
		return skipObject(raw, i, depth+1)
	case c == '[':
		return skipArray(raw, i, depth+1)
	case c == '-' || '0' <= c && c <= '9':
		return scanNumber(raw, i)
	case c == 't':
		return literal(raw, i, "true")
	case c == 'f':
		return literal(raw, i, "false")
	case c == 'n':
		return literal(raw, i, "null")
	}
	return 0, false
}

// skipObject and skipArray check a nested value without collecting its
// members (no key is unquoted).
func skipObject(raw []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return 0, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return 0, false
		}
		kend, ok := scanString(raw, i)
		if !ok {
			return 0, false
		}
		i = skipSpace(raw, kend)
		if i >= len(raw) || raw[i] != ':' {
			return 0, false
		}
		i = skipSpace(raw, i+1)
		if i, ok = skipValue(raw, i, depth); !ok {
			return 0, false
		}
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return 0, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

func skipArray(raw []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return 0, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = skipValue(raw, i, depth); !ok {
			return 0, false
		}
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return 0, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case ']':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

func literal(raw []byte, i int, lit string) (int, bool) {
	if len(raw)-i < len(lit) || string(raw[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// scanNumber checks the number at raw[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(raw []byte, i int) (int, bool) {
	if raw[i] == '-' {
		i++
	}
	switch {
	case i >= len(raw):
		return 0, false
	case raw[i] == '0':
		i++
	case '1' <= raw[i] && raw[i] <= '9':
		i = digits(raw, i+1)
	default:
		return 0, false
	}
	if i < len(raw) && raw[i] == '.' {
		j := digits(raw, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		j := digits(raw, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func digits(raw []byte, i int) int {
	for i < len(raw) && '0' <= raw[i] && raw[i] <= '9' {
		i++
	}
	return i
}

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space (len(raw) when there is none), for callers that walk
// JSON this package has checked.
func SkipSpace(raw []byte, i int) int { return skipSpace(raw, i) }

func skipSpace(raw []byte, i int) int {
	for i < len(raw) {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special is the index of the first byte of s at or after i that is a
// quote, a backslash or a control character (len(s) when none is).
func special(s []byte, i int) int {
	for ; i+8 <= len(s); i += 8 {
		v := binary.LittleEndian.Uint64(s[i:])
		q := v ^ (lsb * '"')
		b := v ^ (lsb * '\\')
		// A byte of x is zero where (x-lsb) &^ x has its top bit set; the
		// lowest such byte is exact (borrows only run upwards).
		m := ((q - lsb) &^ q) | ((b - lsb) &^ b) | ((v - lsb*0x20) &^ v)
		if m &= msb; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return len(s)
}

// scanString checks the string at raw[i] ('"') and returns the index after
// its closing quote.
func scanString(raw []byte, i int) (end int, ok bool) {
	for j := i + 1; ; {
		j = special(raw, j)
		if j >= len(raw) || raw[j] < 0x20 {
			return 0, false
		}
		if raw[j] == '"' {
			return j + 1, true
		}
		// A backslash.
		if j+1 >= len(raw) {
			return 0, false
		}
		switch raw[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j += 2
		case 'u':
			if hex4(raw[j+2:]) < 0 {
				return 0, false
			}
			j += 6
		default:
			return 0, false
		}
	}
}

// Unquote reads raw as exactly one JSON string (JSON white space around it
// allowed) with encoding/json's result: invalid UTF-8 and unpaired
// surrogates become U+FFFD. ok is false for anything else (another type,
// null, bad escapes, control characters, trailing data), and s is then "".
// It does what json.Unmarshal(raw, &s) does in a single pass.
func Unquote(raw []byte) (s string, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '"' {
		return "", false
	}
	s, end, ok := unquoteAt(raw, i)
	if !ok || skipSpace(raw, end) != len(raw) {
		return "", false
	}
	return s, true
}

// UnquoteChecked is Unquote for raw that has been checked already: one
// valid JSON value of any type (its object or document passed Members,
// Valid or encoding/json). A string of valid UTF-8 is then read without a
// second check: its backslashes are found by bytes.IndexByte and the runs
// between them copied, in one pass below exactFrom (unescapeSmall); a
// larger one is measured by a first pass, so that it is allocated at its
// size. Unquote looks at every byte three times (to find the first
// escape, to check and measure, to copy). Anything else is Unquote's.
func UnquoteChecked(raw []byte) (string, bool) {
	i, j := skipSpace(raw, 0), len(raw)
	for j > i && (raw[j-1] == ' ' || raw[j-1] == '\t' || raw[j-1] == '\n' || raw[j-1] == '\r') {
		j--
	}
	if j-i < 2 || raw[i] != '"' || raw[j-1] != '"' {
		return Unquote(raw)
	}
	body := raw[i+1 : j-1]
	k := bytes.IndexByte(body, '\\')
	if !utf8.Valid(body) {
		return Unquote(raw)
	}
	if k < 0 {
		return string(body), true
	}
	if len(body) < exactFrom {
		return unescapeSmall(body, k), true
	}
	// Measure: the body less what each escape saves.
	n := len(body)
	for p := k; ; {
		if body[p+1] == 'u' {
			r, next := escapedRune(body, p)
			n -= next - p - utf8.RuneLen(r)
			p = next
		} else {
			n--
			p += 2
		}
		q := bytes.IndexByte(body[p:], '\\')
		if q < 0 {
			break
		}
		p += q
	}
	o := out{str: true}
	o.sb.Grow(n)
	for p := 0; ; {
		q := bytes.IndexByte(body[p:], '\\')
		if q < 0 {
			o.write(body[p:])
			break
		}
		o.write(body[p : p+q])
		p = writeEscape(&o, body, p+q)
	}
	return o.sb.String(), true
}

// unescapeSmall is the value of a checked body of valid UTF-8 shorter
// than exactFrom whose first backslash is at k, written in one pass into
// room for an upper bound of its length: each escape holds one or two
// backslashes and saves at least a byte, so the value is at most the
// body less half its backslashes. Measuring the value first (as a large
// one is) walks every escape twice, which on a stream of short escaped
// outputs cost more than the few bytes of room it saves (a \n per line
// leaves about one byte in eighty unused, for as long as the value lives).
func unescapeSmall(body []byte, k int) string {
	o := out{str: true}
	o.sb.Grow(len(body) - (bytes.Count(body[k:], []byte{'\\'})+1)/2)
	o.sb.Write(body[:k])
	for p := k; ; {
		p = writeEscape(&o, body, p)
		q := bytes.IndexByte(body[p:], '\\')
		if q < 0 {
			o.sb.Write(body[p:])
			return o.sb.String()
		}
		o.sb.Write(body[p : p+q])
		p += q
	}
}

// backslashOrHigh returns the index of the first backslash or byte outside
// ASCII in s at or after i, eight bytes at a time, or len(s).
func backslashOrHigh(s []byte, i int) int {
	for ; i+8 <= len(s); i += 8 {
		v := binary.LittleEndian.Uint64(s[i:])
		b := v ^ (lsb * '\\')
		if m := (((b - lsb) &^ b) | v) & msb; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '\\' || c >= utf8.RuneSelf {
			return i
		}
	}
	return len(s)
}

// AppendUnquote is Unquote that appends the string to dst, for a caller
// that wants its bytes (to read JSON it holds, say) rather than a string.
func AppendUnquote(dst, raw []byte) ([]byte, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '"' {
		return dst, false
	}
	end, n, ok := scanSized(raw, i)
	if !ok || skipSpace(raw, end) != len(raw) {
		return dst, false
	}
	if cap(dst)-len(dst) < n {
		dst = append(make([]byte, 0, len(dst)+n), dst...) // one allocation
	}
	o := out{b: dst}
	writeBody(&o, raw[i+1:end-1])
	return o.b, true
}

// exactFrom is the length from which a string's invalid UTF-8 is counted
// too while it is measured. Every string with an escape is measured while
// it is checked, so that the one allocation of its value is of the exact
// size: a tool output escapes to a tenth more or so (a \n per line, tabs,
// quotes; a third more with control bytes as \u00XX), and a buffer sized
// for the escaped text would hold that much more for as long as the value
// lives (1.1 MB in a 48 MB session of small outputs). Counting the escapes
// costs nothing the check does not already do; finding invalid UTF-8
// costs a pass over the body, worth it only for a large string: below
// exactFrom a value with invalid bytes (each grows by two, as U+FFFD) is
// larger than measured, and its buffer grows once.
const exactFrom = 64 << 10

// scanSized is scanString that also returns the room the value needs: its
// exact length when the body is valid UTF-8 or may be exactFrom long.
func scanSized(raw []byte, i int) (end, n int, ok bool) {
	return scanCount(raw, i, len(raw)-i >= exactFrom)
}

// scanCount is scanString that also measures the value: the body's length,
// less what each escape saves, plus (when fix) two bytes for each byte of
// invalid UTF-8 (it becomes U+FFFD).
func scanCount(raw []byte, i int, fix bool) (end, n int, ok bool) {
	saved := 0
	for j := i + 1; ; {
		j = special(raw, j)
		if j >= len(raw) || raw[j] < 0x20 {
			return 0, 0, false
		}
		if raw[j] == '"' {
			body := raw[i+1 : j]
			n = len(body) - saved
			if fix && !utf8.Valid(body) {
				n += fixedLen(body) - len(body)
			}
			return j + 1, n, true
		}
		// A backslash.
		if j+1 >= len(raw) {
			return 0, 0, false
		}
		switch raw[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			saved++
			j += 2
		case 'u':
			if hex4(raw[j+2:]) < 0 {
				return 0, 0, false
			}
			r, next := escapedRune(raw, j)
			saved += next - j - utf8.RuneLen(r)
			j = next
		default:
			return 0, 0, false
		}
	}
}

// out is where a value is written: a strings.Builder when a string is
// wanted (it becomes the string without a copy), else a byte slice
// (AppendUnquote). A concrete type rather than an interface, so that the
// builder stays on the caller's stack.
type out struct {
	str bool
	sb  strings.Builder
	b   []byte
}

func (o *out) write(p []byte) {
	if o.str {
		o.sb.Write(p)
		return
	}
	o.b = append(o.b, p...)
}

func (o *out) writeByte(c byte) {
	if o.str {
		o.sb.WriteByte(c)
		return
	}
	o.b = append(o.b, c)
}

func (o *out) writeRune(r rune) {
	if o.str {
		o.sb.WriteRune(r)
		return
	}
	o.b = utf8.AppendRune(o.b, r)
}

// writeFixed writes s with each invalid byte replaced by U+FFFD.
func writeFixed(w *out, s []byte) {
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			w.writeRune(utf8.RuneError)
		} else {
			w.write(s[:size])
		}
		s = s[size:]
	}
}

// fixedLen is the length writeFixed writes for s.
func fixedLen(s []byte) (n int) {
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			n += utf8.RuneLen(utf8.RuneError)
		} else {
			n += size
		}
		s = s[size:]
	}
	return n
}

// unquoteAt checks and decodes the string at raw[i] ('"') in one pass, and
// returns the index after its closing quote.
func unquoteAt(raw []byte, i int) (s string, end int, ok bool) {
	start := i + 1
	j := special(raw, start)
	if j >= len(raw) || raw[j] < 0x20 {
		return "", 0, false
	}
	if raw[j] == '"' {
		// No escape: the body is the value once its UTF-8 is valid.
		body := raw[start:j]
		if utf8.Valid(body) {
			return string(body), j + 1, true
		}
		o := out{str: true}
		writeFixed(&o, body)
		return o.sb.String(), j + 1, true
	}
	// Check the string and find its end first, so that the value is
	// allocated once and writeBody meets only valid escapes.
	end, n, ok := scanSized(raw, i)
	if !ok {
		return "", 0, false
	}
	o := out{str: true}
	o.sb.Grow(n)
	writeBody(&o, raw[start:end-1])
	return o.sb.String(), end, true
}

// writeBody writes the value of a checked string's body (between its
// quotes).
func writeBody(w *out, body []byte) {
	for j := 0; ; {
		k := backslashOrHigh(body, j) // a checked body has no quote or control byte
		w.write(body[j:k])
		if k == len(body) {
			return
		}
		if c := body[k]; c >= utf8.RuneSelf {
			// A run of bytes outside ASCII: copied as is when it is valid
			// UTF-8.
			r := highRun(body, k)
			if utf8.Valid(body[k:r]) {
				w.write(body[k:r])
			} else {
				writeFixed(w, body[k:r])
			}
			j = r
			continue
		}
		// A backslash: the escapes were checked by scanString.
		j = writeEscape(w, body, k)
	}
}

// writeEscape writes the value of the checked escape at body[k] (a
// backslash) and returns the index after it.
func writeEscape(w *out, body []byte, k int) int {
	switch e := body[k+1]; e {
	case 'b':
		w.writeByte('\b')
	case 'f':
		w.writeByte('\f')
	case 'n':
		w.writeByte('\n')
	case 'r':
		w.writeByte('\r')
	case 't':
		w.writeByte('\t')
	case 'u':
		r, next := escapedRune(body, k)
		w.writeRune(r)
		return next
	default: // '"', '\\', '/'
		w.writeByte(e)
	}
	return k + 2
}

// highRun is the end of the run of bytes outside ASCII that starts at k.
func highRun(body []byte, k int) int {
	r := k + 1
	for r < len(body) && body[r] >= utf8.RuneSelf {
		r++
	}
	return r
}

// escapedRune reads the checked \u escape at body[k] (with the low half
// that follows a high surrogate) and returns its rune, U+FFFD for an
// unpaired surrogate, and the index after it.
func escapedRune(body []byte, k int) (rune, int) {
	r := hex4(body[k+2:])
	j := k + 6
	if utf16.IsSurrogate(r) {
		if len(body)-j >= 6 && body[j] == '\\' && body[j+1] == 'u' {
			if r2 := hex4(body[j+2:]); r2 >= 0 {
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					return dec, j + 6
				}
			}
		}
		r = utf8.RuneError
	}
	return r, j
}

// specialOrHighIn is special that also stops at bytes outside ASCII, for
// bytes or a string: eight bytes at a time, the first quote, backslash,
// control byte or non-ASCII byte.
func specialOrHighIn[T ~string | ~[]byte](s T, i int) int {
	for ; i+8 <= len(s); i += 8 {
		v := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		q := v ^ (lsb * '"')
		b := v ^ (lsb * '\\')
		m := ((q - lsb) &^ q) | ((b - lsb) &^ b) | ((v - lsb*0x20) &^ v) | v
		if m &= msb; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return i
		}
	}
	return len(s)
}

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
