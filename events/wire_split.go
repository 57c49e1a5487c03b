package events

import (
	"bytes"
	"strings"

	"github.com/perch-tui/perch/jsonx"
)

// split fills w from data as json.Unmarshal(data, w) does when data is
// valid JSON, in one pass of jsonx over the event and one over its desc
// (encoding/json checks the whole event byte by byte, then decodes it byte
// by byte again). It reports false, leaving w as it was, when data is not
// exactly one valid JSON object: the caller then asks encoding/json, for
// its verdict and its error.
//
// What encoding/json does, kept here: keys match fields exactly or else
// case-folded (strings.EqualFold is its fold), the last of duplicate keys
// wins, a desc object merges into the desc already read, a null desc
// clears it, and a desc of another type (a type error json.Unmarshal
// reports but decodes past) still leaves an empty desc behind.
func (w *wireEvent) split(data []byte) bool {
	return jsonx.Members(data, func(key string, v []byte) {
		switch key {
		case "id":
			w.ID = v
			return
		case "created":
			w.Created = v
			return
		case "desc":
			w.setDesc(v)
			return
		}
		if p := w.wireDesc.field(key); p != nil {
			*p = v
			return
		}
		switch {
		case strings.EqualFold(key, "id"):
			w.ID = v
		case strings.EqualFold(key, "created"):
			w.Created = v
		case strings.EqualFold(key, "desc"):
			w.setDesc(v)
		default:
			if p := w.wireDesc.foldField(key); p != nil {
				*p = v
			}
		}
	})
}

// setDesc reads a desc value. split calls it with a value that jsonx has
// checked already (Members checks the whole event before it hands out a
// member), so an object is split without a second check: its strings —
// a tool's whole output, twice in some dialects — are skipped with
// bytes.IndexByte instead of read again byte by byte.
//
// The desc is read into w.desc (hasDesc), not a Desc of its own, so that
// a wireEvent costs no allocation: the decoder's one stays in its frame.
func (w *wireEvent) setDesc(v []byte) {
	if len(v) == 4 && string(v) == "null" {
		w.hasDesc = false
		return
	}
	if !w.hasDesc {
		w.desc, w.hasDesc = wireDesc{}, true
	}
	if v[0] != '{' {
		return // a type error: the desc stays, empty or as it was
	}
	checkedMembers(v, func(key string, v []byte) {
		p := w.desc.field(key)
		if p == nil {
			p = w.desc.foldField(key)
		}
		if p != nil {
			*p = v
		}
	})
}

// theDesc is the desc that split or encoding/json read, nil for none.
func (w *wireEvent) theDesc() *wireDesc {
	if w.hasDesc {
		return &w.desc
	}
	return w.Desc
}

// checkedMembers calls fn with each member of raw, one JSON object known
// to be valid (and nothing else), in order, as jsonx.Members would. Values
// share raw's memory.
func checkedMembers(raw []byte, fn func(key string, value []byte)) {
	i := jsonx.SkipSpace(raw, 1)
	for i < len(raw) && raw[i] == '"' {
		kend := checkedString(raw, i)
		body := raw[i+1 : kend-1]
		var key string
		if plainKey(body) {
			key = string(body)
		} else {
			key, _ = jsonx.Unquote(raw[i:kend]) // escapes, or UTF-8 to check
		}
		i = jsonx.SkipSpace(raw, jsonx.SkipSpace(raw, kend)+1) // past the colon
		vend := checkedValue(raw, i)
		fn(key, raw[i:vend:vend])
		i = jsonx.SkipSpace(raw, vend)
		if i >= len(raw) || raw[i] != ',' {
			return
		}
		i = jsonx.SkipSpace(raw, i+1)
	}
}

// plainKey: printable ASCII without a backslash, a key that is its body.
func plainKey(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return false
		}
	}
	return true
}

// checkedString returns the index after the valid string at raw[i].
func checkedString(raw []byte, i int) int {
	j := i + 1
	for {
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
		j++
	}
}

// checkedValue returns the index after the valid value at raw[i].
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
				depth--
				if depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return len(raw)
	}
	j := i // a number or a literal
	for j < len(raw) {
		switch raw[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}

// wireKeys are wireDesc's JSON names, in the order of fieldAt.
var wireKeys = [...]string{"msg", "id", "name", "model", "prompt", "tool", "message", "content",
	"tool_calls", "usage", "tool_call", "args", "result", "error", "text", "token_count",
	"origin_token_count", "pruned_token_count", "todos"}

func (d *wireDesc) fieldAt(i int) *rawJSON {
	switch i {
	case 0:
		return &d.Msg
	case 1:
		return &d.ID
	case 2:
		return &d.Name
	case 3:
		return &d.Model
	case 4:
		return &d.Prompt
	case 5:
		return &d.Tool
	case 6:
		return &d.Message
	case 7:
		return &d.Content
	case 8:
		return &d.ToolCalls
	case 9:
		return &d.Usage
	case 10:
		return &d.ToolCall
	case 11:
		return &d.Args
	case 12:
		return &d.Result
	case 13:
		return &d.Error
	case 14:
		return &d.Text
	case 15:
		return &d.TokenCount
	case 16:
		return &d.OriginCount
	case 17:
		return &d.PrunedCount
	case 18:
		return &d.Todos
	}
	return nil
}

// field is the field named key exactly, or nil.
func (d *wireDesc) field(key string) *rawJSON {
	for i, k := range wireKeys {
		if k == key {
			return d.fieldAt(i)
		}
	}
	return nil
}

// foldField is the field whose name folds to key's fold, or nil.
func (d *wireDesc) foldField(key string) *rawJSON {
	for i, k := range wireKeys {
		if strings.EqualFold(k, key) {
			return d.fieldAt(i)
		}
	}
	return nil
}
