package ingest

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Python programs print values with str() or repr() where JSON was due
// (Attocode's session store, Suna's legacy tool results:
// ToolResult(success=True, output='…')). ParsePy reads that printed form
// without evaluating anything: a small recursive-descent reader of the
// literal syntax repr() produces — lists, dicts, tuples, strings, numbers,
// None/True/False and Name(key=value, …) calls.

// PyCall is Name(key=value, …): a dataclass as Python prints it.
type PyCall struct {
	Name string
	Keys []string
	Vals []any
}

// Arg is the value of keyword k, and whether the call has it.
func (c PyCall) Arg(k string) (any, bool) {
	for i, key := range c.Keys {
		if key == k {
			return c.Vals[i], true
		}
	}
	return nil, false
}

// maxPyDepth bounds nesting, so hostile text cannot recurse deeply.
const maxPyDepth = 32

// ParsePy reads s, whole but for surrounding space, as one Python literal.
// The values are nil (None, and nan/inf, which JSON lacks), bool,
// json.Number, string, []any (a list or tuple), map[string]any and PyCall.
// ok is false when s is not exactly one literal.
func ParsePy(s string) (v any, ok bool) {
	p := &pyParser{s: strings.TrimSpace(s)}
	v, ok = p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	if p.i != len(p.s) {
		return nil, false
	}
	return v, true
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// value reads one literal: nil means None.
func (p *pyParser) value(depth int) (any, bool) {
	if depth > maxPyDepth {
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

func (p *pyParser) seq(end byte, depth int) (any, bool) {
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

func (p *pyParser) dict(depth int) (any, bool) {
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
			ks = strings.TrimSpace(strings.Trim(string(keyJSON(k)), `"`))
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

// keyJSON is a key that is not a string as JSON text (a number, a
// tuple), as the key of a JSON object.
func keyJSON(v any) []byte {
	b, _ := json.Marshal(keyValue(v))
	return b
}

func keyValue(v any) any {
	switch x := v.(type) {
	case PyCall:
		o := make(map[string]any, len(x.Keys))
		for i, k := range x.Keys {
			o[k] = keyValue(x.Vals[i])
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = keyValue(e)
		}
		return out
	}
	return v
}

func (p *pyParser) ident() string {
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
func (p *pyParser) name(depth int) (any, bool) {
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
	c := PyCall{Name: n}
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
		c.Keys = append(c.Keys, k)
		c.Vals = append(c.Vals, v)
		if p.eat(')') {
			return c, true
		}
		if !p.eat(',') {
			return nil, false
		}
	}
}

func (p *pyParser) number() (any, bool) {
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
func (p *pyParser) str() (any, bool) {
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
