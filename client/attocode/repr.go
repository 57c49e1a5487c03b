package attocode

import (
	"encoding/json"
	"strings"

	"github.com/perch-tui/perch/internal/ingest"
)

// The Python store writes a message's content with str(), so content that
// was a list of content blocks arrives as Python's printed form:
//
//	[TextContentBlock(text='hi', type='text', cache_control=None)]
//
// reprBlocks reads that form without evaluating anything (ingest.ParsePy).
// It succeeds only when the whole text is such a literal and every call at
// the top is a …Block; then it returns the blocks as JSON content parts
// ({"text":…, "type":"text", …}), which the shared content reader
// understands. Anything else is not touched: the text is shown verbatim.

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
	v, ok := ingest.ParsePy(t)
	if !ok {
		return nil, false
	}
	var parts []any
	switch x := v.(type) {
	case []any:
		parts = x
	case ingest.PyCall:
		parts = []any{x}
	default:
		return nil, false
	}
	if len(parts) == 0 {
		return nil, false
	}
	out := make([]any, 0, len(parts))
	for _, e := range parts {
		c, ok := e.(ingest.PyCall)
		if !ok || !strings.HasSuffix(c.Name, "Block") {
			return nil, false
		}
		out = append(out, object(c))
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

// object is the call as a JSON object of its keyword arguments; a block
// without a type keyword gets one from its class name.
func object(c ingest.PyCall) map[string]any {
	o := make(map[string]any, len(c.Keys)+1)
	for i, k := range c.Keys {
		v := c.Vals[i]
		if cc, ok := v.(ingest.PyCall); ok {
			v = object(cc)
		}
		o[k] = jsonable(v)
	}
	if _, ok := o["type"]; !ok {
		t := strings.TrimSuffix(strings.TrimSuffix(c.Name, "Block"), "Content")
		o["type"] = strings.ToLower(t)
	}
	return o
}

func jsonable(v any) any {
	switch x := v.(type) {
	case ingest.PyCall:
		return object(x)
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
