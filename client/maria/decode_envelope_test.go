package maria

import (
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
)

// TestEnvelopeRules pins the rules wireEvent.read documents: exact keys,
// the last of duplicates wins (a later desc replaces an earlier one), a
// null desc is none, a desc of another type has no variant, and what jsonx
// refuses is worded by encoding/json's error.
func TestEnvelopeRules(t *testing.T) {
	for _, c := range []struct {
		data    string
		kind    events.Kind
		dialect events.Dialect
		id      string
		text    string
		notice  string // a part of the notice, for KindInvalid
	}{
		{data: `{"id":"a","desc":{"msg":"UserMessage","content":"x"}}`,
			kind: events.KindUserMessage, dialect: events.DialectHead, id: "a", text: "x"},
		{data: `{"ID":"a","Desc":{"MSG":"UserMessage","content":"x"}}`,
			kind: events.KindInvalid, notice: "event has neither desc.msg nor msg"},
		{data: `{"id":"a","desc":{"msg":"UserMessage","Content":"x"}}`,
			kind: events.KindUserMessage, dialect: events.DialectHead, id: "a", text: ""},
		{data: `{"id":"a","id":"b","desc":{"msg":"UserMessage","content":"x","content":"y"}}`,
			kind: events.KindUserMessage, dialect: events.DialectHead, id: "b", text: "y"},
		{data: `{"id":"a","desc":{"msg":"UserMessage","content":"x"},"desc":{"msg":"Cancelled"}}`,
			kind: events.KindCancelled, dialect: events.DialectHead, id: "a"},
		{data: `{"desc":{"msg":"UserMessage"},"desc":null,"id":1,"msg":"UserMessage","content":"c"}`,
			kind: events.KindUserMessage, dialect: events.DialectDocs, id: "1", text: "c"},
		{data: `{"id":"a","desc":"x","msg":"UserMessage"}`,
			kind: events.KindInvalid, notice: "event variant (msg) is not a string"},
		{data: `{"id":"a","d\u0065sc":{"m\u0073g":"Cancelled"}}`,
			kind: events.KindCancelled, dialect: events.DialectHead, id: "a"},
		{data: `{"desc":{"msg":"UserMessage"}`,
			kind: events.KindInvalid, notice: "event is not valid JSON (unexpected end of JSON input)"},
		{data: `{"desc":{}}x`,
			kind: events.KindInvalid, notice: "event is not valid JSON (invalid character 'x' after top-level value)"},
	} {
		ev := Decode(events.Frame{Name: "maria", Data: []byte(c.data)})
		if ev.Kind != c.kind {
			t.Errorf("%s: kind %v, want %v (%s)", c.data, ev.Kind, c.kind, ev.Notice)
			continue
		}
		if c.kind == events.KindInvalid {
			if !strings.Contains(ev.Notice, c.notice) {
				t.Errorf("%s: notice %q, want %q in it", c.data, ev.Notice, c.notice)
			}
			continue
		}
		if ev.Dialect != c.dialect || ev.ID != c.id || ev.Text != c.text {
			t.Errorf("%s: dialect %v, id %q, text %q; want %v, %q, %q", c.data, ev.Dialect, ev.ID, ev.Text, c.dialect, c.id, c.text)
		}
	}
}
