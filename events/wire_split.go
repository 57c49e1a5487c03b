package events

import (
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

func (w *wireEvent) setDesc(v []byte) {
	if len(v) == 4 && string(v) == "null" {
		w.Desc = nil
		return
	}
	if w.Desc == nil {
		w.Desc = &wireDesc{}
	}
	if v[0] != '{' {
		return // a type error: the desc stays, empty or as it was
	}
	jsonx.Members(v, func(key string, v []byte) {
		p := w.Desc.field(key)
		if p == nil {
			p = w.Desc.foldField(key)
		}
		if p != nil {
			*p = v
		}
	})
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
