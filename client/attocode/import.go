// Package attocode reads Attocode's saved sessions: the Python agent's
// SQLite session store, and the TypeScript implementation's session log,
// SQLite store and trace log. See docs/formats/attocode.md.
package attocode

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// Importer reads Attocode sessions.
func Importer() ingest.Importer {
	return ingest.Importer{
		Name: "attocode",
		Expects: "a session store (SQLite; --session picks a session, default the newest), " +
			"or a session log or trace log (JSON lines)",
		Detect: detect,
		Import: importFile,
	}
}

var entryTypes = map[string]bool{
	"message": true, "tool_call": true, "tool_result": true,
	"checkpoint": true, "compaction": true, "metadata": true,
}

// isRecord: a session-log entry {"timestamp","type":<entry type>,"data"}
// or a trace record {"_type":"…","_ts"}.
func isRecord(r ingest.Record) bool {
	if ingest.Has(r, "_type", "_ts") {
		return ingest.Str(r, "_type") != ""
	}
	return ingest.Has(r, "timestamp", "type", "data") && entryTypes[ingest.Str(r, "type")]
}

func detect(s *ingest.Sample) int {
	switch s.Shape {
	case ingest.ShapeSQLite:
		if isStore(s.Path) {
			return 90
		}
		return 0
	case ingest.ShapeJSONL, ingest.ShapeJSON:
		recs := s.Records
		if s.Shape == ingest.ShapeJSON && !s.TopArray {
			recs = []ingest.Record{s.Top}
		}
		n := 0
		for _, r := range recs {
			if isRecord(r) {
				n++
			}
		}
		if n == 0 && len(recs) == 1 && longFirstLine(s) && entryTypes[ingest.Str(recs[0], "type")] {
			// A first entry too long for the sample: only the keys before
			// its data were read ({"type":…,"data":… as the agent writes it).
			return 40
		}
		switch {
		case n == 0:
			return 0
		case n*2 >= len(recs):
			return 85
		}
		return 60
	}
	return 0
}

// longFirstLine: the sample ends inside the file's first line, so the file
// may be JSON lines whose first record is very long (a pretty-printed
// document has short lines).
func longFirstLine(s *ingest.Sample) bool {
	return len(s.Head) >= ingest.HeadSize-3 && bytes.IndexByte(s.Head, '\n') < 0
}

// isStore reports the file is one of Attocode's SQLite stores.
func isStore(path string) bool {
	kind := notStore
	_, err := readDB(context.Background(), path, func(tx *sql.Tx) error {
		t, err := tables(tx)
		kind = kindOf(t)
		return err
	})
	return err == nil && kind != notStore
}

func importFile(ctx context.Context, s *ingest.Sample, opts ingest.Options, emit func(events.Event)) error {
	if s.Shape == ingest.ShapeSQLite {
		return importStore(ctx, s.Path, opts, emit)
	}
	if opts.Session != "" {
		emit(notice(events.NoticeInfo, "--session chooses a session of a SQLite store; this file holds one session, and it is shown."))
	}
	d := NewDecoder()
	each := func(pos string, raw []byte) error {
		for _, ev := range d.DecodeAt(pos, raw) {
			emit(ev)
		}
		return ctx.Err()
	}
	var err error
	switch s.Shape {
	case ingest.ShapeJSONL:
		err = ingest.EachLine(s.Path, func(n int, raw []byte) error { return each("line "+strconv.Itoa(n), raw) })
	case ingest.ShapeJSON:
		if longFirstLine(s) {
			// JSON lines whose first line is longer than the sample (a
			// checkpoint holding a long conversation).
			err = ingest.EachLine(s.Path, func(n int, raw []byte) error { return each("line "+strconv.Itoa(n), raw) })
		} else if s.TopArray {
			_, err = ingest.EachElement(s.Path, "", func(i int, raw json.RawMessage) error {
				return each("record "+strconv.Itoa(i+1), raw)
			})
		} else {
			err = eachValue(s.Path, each, emit)
		}
	default:
		return fmt.Errorf("an Attocode session is a SQLite store or JSON lines, not %s", s.Shape)
	}
	if err != nil {
		return err
	}
	for _, ev := range d.Flush() {
		emit(ev)
	}
	st := events.StatusIdle
	if d.tr.ended {
		st = events.StatusStopped
	}
	emit(events.Event{Kind: events.KindRunState, RunStatus: st})
	return nil
}

// eachValue streams the JSON values of a file that holds one record, or
// several written one after another over many lines.
func eachValue(path string, fn func(pos string, raw []byte) error, emit func(events.Event)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	if b, _ := r.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		_, _ = r.Discard(3)
	}
	dec := json.NewDecoder(ingest.NewRepairReader(r))
	for n := 1; ; n++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			emit(events.Event{Kind: events.KindNotice, Level: events.LevelWarning, NoticeKind: events.NoticeError,
				Text: fmt.Sprintf("record %d: the file ends or breaks here: %s", n, short(err))})
			return nil
		}
		if err := fn("record "+strconv.Itoa(n), raw); err != nil {
			return err
		}
	}
}
