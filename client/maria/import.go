// Package maria is perch's knowledge of the maria daemon's sessions that
// is not the wire decoding itself: reading recorded sessions from files.
package maria

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/sse"
)

// Importer reads maria sessions: a recorded event stream (`perch record`,
// any dialect), or the events as a JSON array or JSON lines.
func Importer() ingest.Importer {
	return ingest.Importer{
		Name:    "maria",
		Expects: "a recorded task stream (.sse from perch record) or its events as a JSON array / JSON lines, any dialect",
		Detect:  detect,
		Import:  importFile,
	}
}

func detect(s *ingest.Sample) int {
	if s.Shape == ingest.ShapeSSE {
		for _, f := range s.Frames {
			if f.Name == "maria" || strings.HasPrefix(f.Name, "maria.") {
				return 95
			}
		}
		return 0
	}
	for _, r := range s.Records {
		if isEvent(r) {
			return 80
		}
	}
	return 0
}

// isEvent: the HEAD envelope {"desc":{"msg":…}} or the flat {"msg":…}.
func isEvent(r ingest.Record) bool {
	if d, ok := r["desc"]; ok {
		var desc ingest.Record
		return json.Unmarshal(d, &desc) == nil && ingest.Str(desc, "msg") != ""
	}
	return ingest.Str(r, "msg") != ""
}

func importFile(ctx context.Context, s *ingest.Sample, _ ingest.Options, emit func(events.Event)) error {
	n := 0
	dec := NewDecoder()
	decode := func(pos string, f events.Frame) {
		for _, ev := range dec.Decode(f) {
			if ev.Kind == events.KindInvalid {
				ev.Notice = pos + ": " + ev.Notice
			}
			emit(ev)
		}
	}
	switch s.Shape {
	case ingest.ShapeSSE:
		err := ingest.EachFrame(s.Path, func(f events.Frame) error {
			n++
			decode("frame "+strconv.Itoa(n), f)
			return ctx.Err()
		})
		if errors.Is(err, sse.ErrTruncated) {
			emit(events.Event{Kind: events.KindNotice, Level: events.LevelWarning, NoticeKind: events.NoticeInfo,
				Text: fmt.Sprintf("The recording ends inside frame %d; that frame is left out.", n+1)})
			return nil
		}
		return err
	case ingest.ShapeJSONL:
		return ingest.EachLine(s.Path, func(line int, raw []byte) error {
			decode("line "+strconv.Itoa(line), frameOf(raw))
			return ctx.Err()
		})
	case ingest.ShapeJSON:
		_, err := ingest.EachElement(s.Path, "", func(i int, raw json.RawMessage) error {
			decode("event "+strconv.Itoa(i+1), frameOf(raw))
			return ctx.Err()
		})
		return err
	}
	return fmt.Errorf("a maria session is an SSE recording, JSON lines or a JSON array, not %s", s.Shape)
}

// frameOf gives an event read from JSON the name maria sends it under: a
// bare array is a queued-messages snapshot, anything else a maria event.
func frameOf(raw []byte) events.Frame {
	if len(raw) > 0 && raw[0] == '[' {
		return events.Frame{Name: "maria.queued_messages.synchronized", Data: raw}
	}
	return events.Frame{Name: "maria", Data: raw}
}
