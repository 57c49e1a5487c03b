package maria

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/jsonx"
)

// parseToolCallJSON is what parseToolCall did with encoding/json: the
// oracle of FuzzParseToolCall.
func parseToolCallJSON(raw []byte) events.ToolCall {
	var w struct {
		ID       json.RawMessage `json:"id"`
		Name     string          `json:"name"`
		Args     json.RawMessage `json:"arguments"`
		Input    json.RawMessage `json:"input"`
		Function *struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &w) != nil {
		return events.ToolCall{}
	}
	c := events.ToolCall{ID: jsonx.ID(w.ID), Name: w.Name}
	args := w.Args
	if w.Function != nil {
		if w.Function.Name != "" {
			c.Name = w.Function.Name
		}
		if w.Function.Args != nil {
			args = w.Function.Args
		}
	}
	if args == nil {
		args = w.Input
	}
	c.Args, c.ArgsRaw, c.ArgsErr, c.DoubleEncoded = events.NormalizeArgs(args)
	return c
}

// FuzzParseToolCall: parseToolCall reads a tool call (an element of a
// valid list, so valid JSON) exactly as json.Unmarshal into its struct did,
// and parseToolCalls splits the list as before.
func FuzzParseToolCall(f *testing.F) {
	for _, s := range []string{
		`{"id":"toolu_1","function":{"name":"read_file","arguments":"{\"path\": \"a\"}"},"type":"function"}`,
		`{"id":"c1","name":"bash","input":{"command":"ls"}}`,
		`{"id":7,"name":"x","arguments":{"a":1}}`,
		`{"id":null,"name":"a","name":null,"function":{"name":"x"},"FUNCTION":{}}`,
		`{"Name":"a","NAME":"b","fUnCtIoN":{"ARGUMENTS":"\"\\\"{}\\\"\""}}`,
		`{"name":5}`, `{"function":"f"}`, `{"function":{"name":[]}}`, `{"function":null,"name":"n"}`,
		`{"function":{"name":"a"},"function":null,"input":null}`,
		`{"n\u0061me":"esc","\u212a":1,"\u017fd":2}`,
		"{\"name\":\"\xff\xfe\",\"arguments\":\"\\ud800\"}",
		`null`, `"x"`, `[1]`, `5`, `{}`, ` { "id" : "s" } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // parseToolCall only sees elements of a valid list
		}
		if got, want := parseToolCall(raw), parseToolCallJSON(raw); !reflect.DeepEqual(got, want) {
			t.Fatalf("parseToolCall(%q):\n got %#v\nwant %#v", raw, got, want)
		}
		list := append(append([]byte("["), raw...), ']')
		var want []events.ToolCall
		var rawList []json.RawMessage
		if json.Unmarshal(list, &rawList) == nil {
			want = make([]events.ToolCall, 0, len(rawList))
			for _, r := range rawList {
				if c := parseToolCallJSON(r); c.ID != "" || c.Name != "" || c.ArgsRaw != "" {
					want = append(want, c)
				}
			}
		}
		if got := parseToolCalls(list); !reflect.DeepEqual(got, want) {
			t.Fatalf("parseToolCalls(%q):\n got %#v\nwant %#v", list, got, want)
		}
	})
}

// TestParseToolCallsNullAndInvalid: null is an empty list, not nil, as
// json.Unmarshal left it; what is not a list is nil.
func TestParseToolCallsNullAndInvalid(t *testing.T) {
	if got := parseToolCalls([]byte("null")); got == nil || len(got) != 0 {
		t.Fatalf("null: %#v", got)
	}
	for _, s := range []string{`{}`, `"x"`, `[`, ``, `[1,]`} {
		if got := parseToolCalls([]byte(s)); got != nil {
			t.Errorf("%q: %#v", s, got)
		}
	}
}
