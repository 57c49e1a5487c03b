package anthropic

import (
	"bytes"
	"encoding/json"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
)

// UsageMax merges the usage records of one message as a stream reports
// them: message_start has the input and cache counts, each message_delta
// the output so far (cumulative). Every count keeps its largest value, so
// nothing is ever added twice.
type UsageMax struct{ o normalize.Object }

// Merge takes one usage record (an object; anything else is ignored). It
// keeps copies: raw may be in a buffer that is reused.
func (u *UsageMax) Merge(raw json.RawMessage) {
	o := normalize.AsObject(raw)
	if o == nil {
		return
	}
	if u.o == nil {
		u.o = normalize.Object{}
	}
	for k, v := range o {
		if normalize.IsNull(v) {
			continue
		}
		nv, ok := normalize.Float(v)
		if !ok {
			u.o[k] = bytes.Clone(v) // a nested record or a label: the latest wins
			continue
		}
		if old, ok := normalize.Float(u.o[k]); !ok || nv > old {
			u.o[k] = bytes.Clone(v)
		}
	}
}

// Usage is the merged record read by normalize.Usage (nil when nothing
// was reported).
func (u *UsageMax) Usage() *events.Usage {
	if u.o == nil {
		return nil
	}
	b, err := json.Marshal(u.o)
	if err != nil {
		return nil
	}
	return normalize.Usage(b)
}
