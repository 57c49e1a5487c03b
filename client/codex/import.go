package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// Importer reads what `codex exec --json` prints.
func Importer() ingest.Importer {
	return ingest.Importer{
		Name:    "codex",
		Expects: "the JSON lines of codex exec --json (thread/turn/item events, or the older {\"id\",\"msg\":{…}} events), or a Codex rollout file (sessions/…/rollout-*.jsonl)",
		Detect:  detect,
		Import:  importFile,
		Billing: billing,
	}
}

// eventTypes are the discriminators of the current format.
var eventTypes = map[string]bool{
	"thread.started": true, "turn.started": true, "turn.completed": true, "turn.failed": true,
	"item.started": true, "item.updated": true, "item.completed": true, "item.plan.delta": true,
	"session.created": true,
}

// detect recognises codex by its event types, or by the older envelope
// whose "msg" is an object with a "type" (maria's documented dialect also
// says "msg", but as a string).
func detect(s *ingest.Sample) int {
	if s.Shape != ingest.ShapeJSONL && s.Shape != ingest.ShapeJSON {
		return 0
	}
	best := 0
	records := s.Records
	if s.Top != nil && !s.TopArray {
		records = append([]ingest.Record{s.Top}, records...) // a file of one line
	}
	for _, r := range records {
		if eventTypes[ingest.Str(r, "type")] {
			return 95
		}
		if _, ok := r["payload"]; ok && rolloutKinds[ingest.Str(r, "type")] {
			return 95
		}
		if m := normalize.AsObject(r["msg"]); m != nil && normalize.StrField(m, "type") != "" {
			best = 90
		}
	}
	return best
}

func importFile(ctx context.Context, s *ingest.Sample, _ ingest.Options, emit func(events.Event)) error {
	return decodeFile(ctx, s, NewDecoder(), emit)
}

// decodeFile streams the file at s through d.
func decodeFile(ctx context.Context, s *ingest.Sample, d *Decoder, emit func(events.Event)) error {
	put := func(evs []events.Event) {
		for _, ev := range evs {
			emit(ev)
		}
	}
	var err error
	switch {
	case s.Shape == ingest.ShapeJSONL:
		err = ingest.EachLine(s.Path, func(line int, raw []byte) error {
			put(d.Decode("line "+strconv.Itoa(line), raw))
			return ctx.Err()
		})
	case s.Shape == ingest.ShapeJSON && s.TopArray:
		n := 0
		_, err = ingest.EachElement(s.Path, "", func(i int, raw json.RawMessage) error {
			n = i + 1
			put(d.Decode("event "+strconv.Itoa(i+1), raw))
			return ctx.Err()
		})
		if err != nil && ctx.Err() == nil {
			put([]events.Event{notice(events.LevelWarning, events.NoticeError,
				fmt.Sprintf("the document breaks off after event %d: %v", n, err))})
			err = nil
		}
	case s.Shape == ingest.ShapeJSON:
		// One event alone (a file of one line).
		var top ingest.Record
		if top, err = ingest.EachElement(s.Path, "\x00", nil); err != nil {
			return err
		}
		raw, _ := json.Marshal(top)
		put(d.Decode("line 1", raw))
	default:
		return fmt.Errorf("a codex file is JSON lines (or a JSON array of events), not %s", s.Shape)
	}
	put(d.Flush())
	return err
}
