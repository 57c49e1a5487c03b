package suna

import (
	"encoding/json"
	"reflect"
	"testing"
)

// historyRows and rowHead read the history route's answer as
// json.Unmarshal into the wire shapes did.
func TestHistoryRowsAsEncodingJSON(t *testing.T) {
	bodies := []string{
		`{"messages":[]}`,
		`{"messages":null}`,
		`{}`,
		`{"messages":[{"message_id":"m1","type":"user","created_at":"2026-01-01T00:00:00Z"},{"type":"assistant"}]}`,
		` {"pagination":{}, "messages" : [ {"message_id":null,"type":7,"created_at":"x\u00e9"} , {"message_id":"a","message_id":"b"} ] } `,
		`{"messages":[{"message_id":"m1"}],"messages":[]}`,
	}
	for _, b := range bodies {
		var want struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal([]byte(b), &want); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		got, err := historyRows([]byte(b))
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if len(got) != len(want.Messages) {
			t.Fatalf("%s: %d rows, want %d", b, len(got), len(want.Messages))
		}
		for i := range got {
			if string(got[i]) != string(want.Messages[i]) {
				t.Errorf("%s: row %d %s, want %s", b, i, got[i], want.Messages[i])
			}
			var wh struct {
				MessageID string `json:"message_id"`
				Type      string `json:"type"`
				CreatedAt string `json:"created_at"`
			}
			_ = json.Unmarshal(got[i], &wh)
			if h := rowHead(got[i]); !reflect.DeepEqual(h, histRowHead(wh)) {
				t.Errorf("%s: row %d head %+v, want %+v", b, i, h, wh)
			}
		}
	}
	for _, b := range []string{``, `[]`, `{"messages":{}}`, `{"messages":[NaN]}`, `{"messages":[1,]}`, `{"messages":[]} x`} {
		if _, err := historyRows([]byte(b)); err == nil {
			t.Errorf("%q: no error", b)
		}
	}
}
