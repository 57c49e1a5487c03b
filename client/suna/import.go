// Package suna reads Suna (Kortix "AgentPress") sessions: the message
// history of a thread (GET /threads/{id}/messages) and recorded agent-run
// streams (GET /agent-run/{id}/stream). See docs/formats/suna.md.
package suna

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/sse"
)

// Importer reads Suna threads and agent-run recordings.
func Importer() ingest.Importer {
	return ingest.Importer{
		Name:    "suna",
		Expects: `a thread's messages ({"messages":[…]} from GET /threads/{id}/messages) or a recorded agent-run stream (.sse)`,
		Detect:  detect,
		Import:  importFile,
	}
}

// bareTypes are the stream's flat events that no other system sends.
var bareTypes = map[string]bool{
	"ack": true, "estimate": true, "prep_stage": true, "degradation": true,
	"context_usage": true, "summarizing context": true, "llm_ttft": true,
	"tool_output_stream": true, "llm_response_start": true, "llm_response_end": true,
}

// rowTypes are the message types of Suna's rows.
var rowTypes = map[string]bool{
	"user": true, "assistant": true, "tool": true, "status": true, "system": true,
	"llm_response_start": true, "llm_response_end": true, "assistant_response_end": true,
	"image_context": true, "browser_state": true, "reasoning": true, "summary": true,
}

// looksLikeRow: a message row, told by Suna's own keys.
func looksLikeRow(r ingest.Record) bool {
	if !rowTypes[ingest.Str(r, "type")] {
		return false
	}
	return ingest.Has(r, "thread_id") && (ingest.Has(r, "is_llm_message") || ingest.Has(r, "message_id")) ||
		ingest.Has(r, "is_llm_message", "metadata")
}

func detect(s *ingest.Sample) int {
	rows, bare, events, pings := 0, 0, 0, 0
	for _, r := range s.Records {
		switch {
		case looksLikeRow(r):
			rows++
		case bareTypes[ingest.Str(r, "type")]:
			bare++
		case ingest.Str(r, "type") == "ping" && len(r) == 1:
			pings++
		}
		if ingest.Str(r, "_event_id") != "" {
			events++
		}
	}
	switch s.Shape {
	case ingest.ShapeSSE:
		for _, f := range s.Frames {
			if f.Name != "" {
				return 0 // Suna's frames carry data only
			}
		}
		switch {
		case rows > 0 || events > 0:
			return 90
		case bare > 0:
			return 70
		case pings > 0 && pings == len(s.Records):
			return 30
		}
	case ingest.ShapeJSON:
		if rows > 0 && (s.Field == "messages" || s.TopArray) {
			return 95
		}
		if rows > 0 {
			return 70
		}
	case ingest.ShapeJSONL:
		if rows > 0 || events > 0 {
			return 85
		}
		if bare > 0 {
			return 60
		}
	}
	return 0
}

func importFile(ctx context.Context, s *ingest.Sample, _ ingest.Options, emit func(events.Event)) error {
	d := NewDecoder()
	send := func(evs []events.Event) {
		for _, ev := range evs {
			emit(ev)
		}
	}
	switch s.Shape {
	case ingest.ShapeSSE:
		n := 0
		err := ingest.EachFrame(s.Path, func(f events.Frame) error {
			n++
			send(d.DecodeAt("frame "+strconv.Itoa(n), f.Data))
			return ctx.Err()
		})
		send(d.Flush())
		if errors.Is(err, sse.ErrTruncated) {
			emit(events.Event{Kind: events.KindNotice, Level: events.LevelWarning, NoticeKind: events.NoticeInfo,
				Text: fmt.Sprintf("The recording ends inside frame %d; that frame is left out.", n+1)})
			return nil
		}
		return err
	case ingest.ShapeJSONL:
		if streamLike(s) {
			err := ingest.EachLine(s.Path, func(line int, raw []byte) error {
				send(d.DecodeAt("line "+strconv.Itoa(line), raw))
				return ctx.Err()
			})
			send(d.Flush())
			return err
		}
		lines := func(fn func(string, []byte) error) error {
			return ingest.EachLine(s.Path, func(line int, raw []byte) error { return fn("line "+strconv.Itoa(line), raw) })
		}
		// A line that cannot be read fails the import before anything is
		// shown (strict).
		if _, err := readHistory(ctx, lines, false, true, d, send); err != nil {
			return err
		}
		return ctx.Err()
	case ingest.ShapeJSON:
		elements := func(fn func(string, []byte) error) error {
			_, err := ingest.EachElement(s.Path, "messages", func(i int, raw json.RawMessage) error {
				return fn("message "+strconv.Itoa(i+1), raw)
			})
			return err
		}
		n, err := readHistory(ctx, elements, true, false, d, send) // EachElement's elements are ours to keep
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			// What came before the damage is shown; say where it stopped.
			emit(events.Event{Kind: events.KindNotice, Level: events.LevelWarning, NoticeKind: events.NoticeError,
				Text: fmt.Sprintf("The document is damaged after message %d, the rest is left out: %v", n, err)})
		}
		return ctx.Err()
	}
	return fmt.Errorf("a Suna file is a thread's messages as JSON, or a recorded stream (SSE or JSON lines), not %s", s.Shape)
}

// streamLike: JSON lines that are a stream's frames (event ids, chunks,
// bare events) rather than stored rows.
func streamLike(s *ingest.Sample) bool {
	for _, r := range s.Records {
		if ingest.Str(r, "_event_id") != "" || bareTypes[ingest.Str(r, "type")] || ingest.Str(r, "type") == "ping" {
			return true
		}
		meta := object(r["metadata"])
		switch normalize.StrField(meta, "stream_status") {
		case "chunk", "reasoning_chunk", "tool_call_chunk":
			return true
		}
	}
	return false
}
