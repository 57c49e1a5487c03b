package events

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzWireSplit: split reads an event exactly as json.Unmarshal into a
// wireEvent does (the decoder's slow path), and refuses what
// json.Unmarshal refuses as JSON.
func FuzzWireSplit(f *testing.F) {
	corpusFrames(f)
	for _, s := range []string{
		`{"ID":"a","Desc":{"MSG":"UserMessage","Content":"x"}}`,
		"{\"\u212aey\":1,\"id\":\"x\",\"desc\":{\"msg\":\"Pruned\",\"\u017fextra\":2,\"Id\":\"p\"}}",
		`{"desc":{"msg":"A","text":"x"},"desc":{"msg":"B"}}`,
		`{"desc":{"msg":"A"},"desc":null,"msg":"UserMessage","content":"c"}`,
		`{"desc":"x","msg":"UserMessage"}`,
		`{"desc":[1,2],"desc":{"text":"t"}}`,
		`{"desc":{"msg":"A"},"desc":5}`,
		`{"id":1,"id":2,"msg":"MessageAdded","MESSAGE":{"role":"user","content":"u"}}`,
		`{"d\u0065sc":{"m\u0073g":"X"}}`,
		`{"de\u017fc":{"m\u017fg":"TokenCounted","to\u212aen_count":5,"\u0131d":"not id"}}`,
		"{\"tool_calls\":[],\"tool_call\":{},\"TOOL_CALL\":null}",
		`{"desc":{}} `,
		`{"desc":{"msg":"A"}`,
		`{"desc":{"msg":"A"}}x`,
		`{"a":1,}`,
		"{\"\xff\":1,\"msg\":\"\xfe\"}",
	} {
		f.Add("maria", []byte(s))
	}
	f.Fuzz(func(t *testing.T, _ string, data []byte) {
		var want wireEvent
		err := json.Unmarshal(data, &want)
		var te *json.UnmarshalTypeError
		validJSON := err == nil || errors.As(err, &te)
		var got wireEvent
		ok := got.split(data)
		// split reads desc into its own room: compare it as a Desc.
		got.Desc = nil
		if d := got.theDesc(); d != nil {
			c := *d
			got.Desc = &c
		}
		got.desc, got.hasDesc = wireDesc{}, false
		if ok != validJSON {
			if !ok && len(data) > 0 && data[0] != '{' {
				// Not an object at all: split only reads objects, and
				// the decoder never asks it about anything else.
				return
			}
			t.Fatalf("split ok=%v, json.Unmarshal err=%v for %q", ok, err, data)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("split differs for %q:\n got %s\nwant %s", data, dump(got), dump(want))
		}
	})
}

func dump(w wireEvent) string {
	s := "id=" + string(w.ID) + " created=" + string(w.Created) + " msg=" + string(w.Msg) + " text=" + string(w.Text)
	if w.Desc == nil {
		return s + " desc=nil"
	}
	return s + " desc{msg=" + string(w.Desc.Msg) + " id=" + string(w.Desc.ID) + " text=" + string(w.Desc.Text) + "}"
}
