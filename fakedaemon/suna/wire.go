package suna

import (
	"bytes"
	"encoding/json"

	"github.com/perch-tui/perch/fakedaemon/pyjson"
)

// obj is a JSON object whose keys keep their order, as Python dicts do:
// the stream's frames are written key by key like Suna's json.dumps, and
// the REST bodies keep the same order (easier to read in a test failure).
type obj []kv

type kv struct {
	k string
	v any
}

// with returns o with k set (appended when new).
func (o obj) with(k string, v any) obj {
	for i := range o {
		if o[i].k == k {
			o[i].v = v
			return o
		}
	}
	return append(o, kv{k, v})
}

func (o obj) get(k string) any {
	for _, p := range o {
		if p.k == k {
			return p.v
		}
	}
	return nil
}

// MarshalJSON writes the REST form: ordinary JSON, UTF-8 kept.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(p.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (o obj) Len() int                   { return len(o) }
func (o obj) Member(i int) (string, any) { return o[i].k, o[i].v }

// pyDumps writes v as Python's json.dumps does by default (see
// pyjson.Dumps): Suna's stream frames are written that way.
func pyDumps(v any) []byte { return pyjson.Dumps(v) }
