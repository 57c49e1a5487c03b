package maria

import (
	"fmt"
	"testing"

	"github.com/perch-tui/perch/events"
)

// TestReplayOfALongLogIsDroppedWhole: a reconnect replays a long log from
// its start; every event seen before is dropped, however long ago it
// came, and what is new after it still passes — also an event the daemon
// appended again later in the log.
func TestReplayOfALongLogIsDroppedWhole(t *testing.T) {
	frame := func(i int) events.Frame {
		return events.Frame{Name: "maria", Data: []byte(fmt.Sprintf(`{"id":"ev-%d","desc":{"msg":"UserMessage","content":"message %d"}}`, i, i))}
	}
	d := NewDecoder()
	const n = 3*4096 + 17 // past the id set's map, into its sorted slice
	for i := range n {
		if got := d.Decode(frame(i)); len(got) != 1 {
			t.Fatalf("event %d, first sight: %d events", i, len(got))
		}
	}
	d.Reconnected()
	for i := range n {
		if got := d.Decode(frame(i)); len(got) != 0 {
			t.Fatalf("event %d, replayed: %d events passed", i, len(got))
		}
	}
	if got := d.Decode(frame(n)); len(got) != 1 {
		t.Fatalf("the new event after the replay: %d events", len(got))
	}
	if got := d.Decode(frame(5)); len(got) != 0 {
		t.Fatalf("an old event appended again: %d events passed", len(got))
	}
}
