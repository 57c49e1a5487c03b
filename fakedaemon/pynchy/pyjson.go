package pynchy

import "github.com/perch-tui/perch/fakedaemon/pyjson"

// pynchy writes every JSON document with Python's json.dumps: ", " and
// ": " as separators, keys in insertion order, non-ASCII text escaped as
// \uXXXX (surrogate pairs above the BMP), and NaN / Infinity written bare.
// The writer is package pyjson's, shared with the fake Suna.

// kv is one member of an object, in order.
type kv struct {
	k string
	v any
}

// obj is a JSON object whose members keep their order.
type obj []kv

// get returns the value of key k (nil when absent).
func (o obj) get(k string) any {
	for _, m := range o {
		if m.k == k {
			return m.v
		}
	}
	return nil
}

// without returns o minus the members named in keys.
func (o obj) without(keys ...string) obj {
	out := make(obj, 0, len(o))
next:
	for _, m := range o {
		for _, k := range keys {
			if m.k == k {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

func (o obj) Len() int                   { return len(o) }
func (o obj) Member(i int) (string, any) { return o[i].k, o[i].v }

// dumps encodes v as json.dumps does (see pyjson.Dumps).
func dumps(v any) []byte { return pyjson.Dumps(v) }
