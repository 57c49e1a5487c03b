package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// Importer reads Claude Code's print-mode output: stream-json lines, the
// same messages as a JSON array (json output with --verbose), or the one
// result object of the json output format.
func Importer() ingest.Importer {
	return ingest.Importer{
		Name:    "claude-code",
		Expects: "claude -p --output-format stream-json output (JSON lines, partial messages too), or --output-format json (a result object, or an array with --verbose)",
		Detect:  detect,
		Import:  importFile,
		Billing: billing,
	}
}

func detect(s *ingest.Sample) int {
	switch s.Shape {
	case ingest.ShapeJSONL:
		return recordsScore(s.Records)
	case ingest.ShapeJSON:
		if s.TopArray {
			return recordsScore(s.Records)
		}
		if isResult(s.Top) {
			return 85
		}
		if s.Top != nil && isLine(s.Top) {
			return 90 // a stream-json output of one line
		}
	}
	return 0
}

func recordsScore(recs []ingest.Record) int {
	for _, r := range recs {
		if isLine(r) {
			return 90
		}
	}
	return 0
}

// isLine: a record only Claude Code's stream-json writes.
func isLine(r ingest.Record) bool {
	switch ingest.Str(r, "type") {
	case "system":
		return ingest.Str(r, "subtype") != "" && (ingest.Has(r, "session_id") || ingest.Has(r, "uuid"))
	case "assistant", "user":
		m := normalize.AsObject(r["message"])
		return m != nil && ingest.Has(m, "content") &&
			(ingest.Has(r, "session_id") || ingest.Has(r, "parent_tool_use_id") || ingest.Has(r, "uuid"))
	case "result":
		return isResult(r)
	case "stream_event":
		return normalize.AsObject(r["event"]) != nil
	}
	return false
}

func isResult(r ingest.Record) bool {
	return r != nil && ingest.Str(r, "type") == "result" && ingest.Str(r, "subtype") != "" &&
		(ingest.Has(r, "session_id") || ingest.Has(r, "duration_ms") || ingest.Has(r, "total_cost_usd"))
}

func importFile(ctx context.Context, s *ingest.Sample, _ ingest.Options, emit func(events.Event)) error {
	d := NewDecoder()
	emitAll := func(evs []events.Event) {
		for _, ev := range evs {
			emit(ev)
		}
	}
	var err error
	switch s.Shape {
	case ingest.ShapeJSONL:
		err = ingest.EachLine(s.Path, func(line int, raw []byte) error {
			emitAll(d.DecodeAt("line "+strconv.Itoa(line), raw))
			return ctx.Err()
		})
	case ingest.ShapeJSON:
		if s.TopArray {
			_, err = ingest.EachElement(s.Path, "", func(i int, raw json.RawMessage) error {
				emitAll(d.DecodeAt("element "+strconv.Itoa(i+1), raw))
				return ctx.Err()
			})
			break
		}
		// One object: the json output format's result.
		raw, rerr := os.ReadFile(s.Path)
		if rerr != nil {
			return fmt.Errorf("read %s: %w", s.Path, rerr)
		}
		emitAll(d.DecodeAt("", ingest.Repair(bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")))))
	default:
		return fmt.Errorf("Claude Code output is JSON lines or JSON, not %s", s.Shape)
	}
	emitAll(d.Flush())
	return err
}
