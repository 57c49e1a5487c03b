package suna

import (
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
func (o obj) MarshalJSON() ([]byte, error) { return o.appendJSON(nil) }

// appendJSON writes o after b. Nested objects (and lists of them) are
// written in place: through json.Marshal each level's output would be
// checked and copied again by the level above, which made a long
// thread's history (a megabyte of rows) take the fake longer to serve
// than perch takes to read it.
func (o obj) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	for i, p := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(p.k)
		b = append(b, k...)
		b = append(b, ':')
		var err error
		if b, err = appendJSON(b, p.v); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case obj:
		return x.appendJSON(b)
	case []obj:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = e.appendJSON(b); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, j...), nil
}

func (o obj) Len() int                   { return len(o) }
func (o obj) Member(i int) (string, any) { return o[i].k, o[i].v }

// pyDumps writes v as Python's json.dumps does by default (see
// pyjson.Dumps): Suna's stream frames are written that way.
func pyDumps(v any) []byte { return pyjson.Dumps(v) }
