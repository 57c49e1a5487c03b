package attocode

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The Python store writes a message's content with str(), so content that
// was a list of content blocks arrives as Python's printed form:
//
//	[TextContentBlock(text='hi', type='text', cache_control=None)]
//
// reprBlocks reads that form without evaluating anything: it is a small
// recursive-descent reader of the literal syntax print() produces (lists,
// dicts, tuples, strings, numbers, None/True/False and Name(key=value)
// calls). It succeeds only when the whole text is such a literal and every
// call at the top is a …Block; then it returns the blocks as JSON content
// parts ({"text":…, "type":"text", …}), which the shared content reader
// understands. Anything else is not touched: the text is shown verbatim.

// maxReprDepth bounds nesting, so hostile text cannot recurse deeply.
const maxReprDepth = 32

// reprBlocks converts a printed list of content blocks (or one block) into
// a JSON array of parts; ok is false when s is not exactly that.
func reprBlocks(s string) (json.RawMessage, bool) {
	t := strings.TrimSpace(s)
	if !strings.HasSuffix(t, ")") && !strings.HasSuffix(t, "]") {
		return nil, false
	}
	if !strings.HasPrefix(t, "[") && !isBlockCall(t) {
		return nil, false
	}
	if !strings.Contains(t, "Block(") {
		return nil, false
	}
	p := &reprParser{s: t}
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	if p.i != len(p.s) {
		return nil, false
	}
	var parts []any
	switch x := v.(type) {
	case []any:
		parts = x
	case reprCall:
		parts = []any{x}
	default:
		return nil, false
	}
	if len(parts) == 0 {
		return nil, false
	}
	out := make([]any, 0, len(parts))
	for _, e := range parts {
		c, ok := e.(reprCall)
		if !ok || !strings.HasSuffix(c.name, "Block") {
			return nil, false
		}
		out = append(out, c.object())
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, false
	}
	return b, true
}

func isBlockCall(t string) bool {
	name, _, ok := strings.Cut(t, "(")
	return ok && strings.HasSuffix(name, "Block") && isIdent(name)
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}

// reprCall is Name(key=value, …): a dataclass as Python prints it.
type reprCall struct {
	name string
	keys []string
	vals []any
}

// object is the call as a JSON object of its keyword arguments; a block
// without a type keyword gets one from its class name.
func (c reprCall) object() map[string]any {
	o := make(map[string]any, len(c.keys)+1)
	for i, k := range c.keys {
		v := c.vals[i]
		if cc, ok := v.(reprCall); ok {
			v = cc.object()
		}
		o[k] = jsonable(v)
	}
	if _, ok := o["type"]; !ok {
		t := strings.TrimSuffix(strings.TrimSuffix(c.name, "Block"), "Content")
		o["type"] = strings.ToLower(t)
	}
	return o
}

func jsonable(v any) any {
	switch x := v.(type) {
	case reprCall:
		return x.object()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	}
	return v
}

type reprParser struct {
	s string
	i int
}

func (p *reprParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *reprParser) eat(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *reprParser) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// value reads one literal: nil means None.
func (p *reprParser) value(depth int) (any, bool) {
	if depth > maxReprDepth {
		return nil, false
	}
	switch c := p.peek(); {
	case c == '\'' || c == '"':
		return p.str()
	case c == '[':
		p.i++
		return p.seq(']', depth)
	case c == '(':
		p.i++
		return p.seq(')', depth)
	case c == '{':
		p.i++
		return p.dict(depth)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		return p.name(depth)
	}
	return nil, false
}

func (p *reprParser) seq(end byte, depth int) (any, bool) {
	out := []any{}
	if p.eat(end) {
		return out, true
	}
	for {
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if p.eat(end) {
			return out, true
		}
		if !p.eat(',') {
			return nil, false
		}
		if p.eat(end) { // a trailing comma: (x,)
			return out, true
		}
	}
}

func (p *reprParser) dict(depth int) (any, bool) {
	out := map[string]any{}
	if p.eat('}') {
		return out, true
	}
	for {
		k, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		ks, ok := k.(string)
		if !ok {
			ks = strings.TrimSpace(strings.Trim(string(mustJSON(k)), `"`))
		}
		if !p.eat(':') {
			return nil, false
		}
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		out[ks] = v
		if p.eat('}') {
			return out, true
		}
		if !p.eat(',') {
			return nil, false
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(jsonable(v))
	return b
}

func (p *reprParser) ident() string {
	p.space()
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (p.i > start && c >= '0' && c <= '9') {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

// name reads None/True/False or a call Name(key=value, …).
func (p *reprParser) name(depth int) (any, bool) {
	n := p.ident()
	switch n {
	case "None":
		return nil, true
	case "True":
		return true, true
	case "False":
		return false, true
	case "nan", "inf":
		return nil, true
	}
	if n == "" || !p.eat('(') {
		return nil, false
	}
	c := reprCall{name: n}
	if p.eat(')') {
		return c, true
	}
	for {
		k := p.ident()
		if k == "" || !p.eat('=') {
			return nil, false
		}
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		c.keys = append(c.keys, k)
		c.vals = append(c.vals, v)
		if p.eat(')') {
			return c, true
		}
		if !p.eat(',') {
			return nil, false
		}
	}
}

func (p *reprParser) number() (any, bool) {
	p.space()
	start := p.i
	if p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
	}
	for p.i < len(p.s) && strings.IndexByte("0123456789.eE+-_", p.s[p.i]) >= 0 {
		p.i++
	}
	text := strings.ReplaceAll(p.s[start:p.i], "_", "")
	if text == "-" {
		// -inf
		if n := p.ident(); n == "inf" {
			return nil, true
		}
		return nil, false
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, false
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), true
}

// str reads a Python string literal as repr() writes it (single or double
// quotes, backslash escapes). Lone surrogates become U+FFFD.
func (p *reprParser) str() (any, bool) {
	q := p.s[p.i]
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), true
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return nil, false
			}
			p.i += 2
			switch e := p.s[p.i-1]; e {
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'v':
				b.WriteByte('\v')
			case '\n':
				// a line continuation
			case 'x', 'u', 'U':
				n := 2
				if e == 'u' {
					n = 4
				} else if e == 'U' {
					n = 8
				}
				if p.i+n > len(p.s) {
					return nil, false
				}
				r, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
				if err != nil {
					return nil, false
				}
				p.i += n
				if !utf8.ValidRune(rune(r)) {
					r = utf8.RuneError
				}
				b.WriteRune(rune(r))
			case '0', '1', '2', '3', '4', '5', '6', '7':
				j := p.i - 1
				end := j
				for end < len(p.s) && end < j+3 && p.s[end] >= '0' && p.s[end] <= '7' {
					end++
				}
				r, _ := strconv.ParseUint(p.s[j:end], 8, 32)
				p.i = end
				b.WriteRune(rune(r))
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return nil, false
}
