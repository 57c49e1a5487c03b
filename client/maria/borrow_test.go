package maria

import (
	"context"
	"reflect"
	"testing"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/sse"
)

// A task stream's frames are read in the stream's buffer, not copied
// (StreamTaskActivity): what a replay decodes to is the same as from
// frames of their own, in each dialect, with a large output and a long
// line among small events, after the buffer was read into thousands of
// times since.
func TestBorrowedFramesDecodeAsOwnedOnes(t *testing.T) {
	for _, dialect := range []fakedaemon.Dialect{fakedaemon.DialectHead, fakedaemon.DialectLegacy, fakedaemon.DialectDocs} {
		t.Run(string(dialect), func(t *testing.T) {
			d := fakedaemon.New(fakedaemon.Options{Speed: 1000, Seed: 7, Dialect: dialect})
			srv, err := d.Start("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			info, err := d.AddLongSession(fakedaemon.LongSession{Events: 3000, BigOutput: 200_000, LongLine: 70_000})
			if err != nil {
				t.Fatal(err)
			}
			be, err := OpenWith(client.Config{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			replay := func(borrow bool) []events.Event {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var got []events.Event
				frames := 0
				on := func(f events.Frame) {
					got = append(got, Decode(f))
					if frames++; frames == info.Events {
						cancel()
					}
				}
				if borrow {
					_ = be.Client().StreamTaskActivity(ctx, info.TaskID, on, nil, &sse.Activity{})
				} else {
					_ = be.Client().StreamTask(ctx, info.TaskID, on, nil)
				}
				return got
			}
			owned, borrowed := replay(false), replay(true)
			if len(owned) != info.Events || len(borrowed) != info.Events {
				t.Fatalf("decoded %d and %d events, want %d", len(owned), len(borrowed), info.Events)
			}
			for i := range owned {
				if !reflect.DeepEqual(borrowed[i], owned[i]) {
					t.Fatalf("event %d from a borrowed frame:\n%+v\nwant\n%+v", i, borrowed[i], owned[i])
				}
			}
		})
	}
}
