// Package pynchy reads the sessions of pynchy, an agent host that talks to
// people through chat channels: the history its HTTP API returns
// (/api/messages) and recordings of its global event stream (/api/events).
// See docs/formats/pynchy.md.
package pynchy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/sse"
)

// Importer reads pynchy chats.
func Importer() ingest.Importer {
	return ingest.Importer{
		Name:    "pynchy",
		Expects: "a chat's history from /api/messages (JSON array) or a recording of /api/events (.sse, --chat JID when it holds several chats)",
		Detect:  detect,
		Import:  importFile,
	}
}

var eventTypes = map[string]bool{"message": true, "agent_activity": true, "agent_trace": true, "chat_cleared": true}

// isEvent: an event of the stream has a chat_jid and one of its types (or a
// trace_type, which survives a data key that replaced the type).
func isEvent(r ingest.Record) bool {
	if ingest.Str(r, "chat_jid") == "" {
		return false
	}
	_, trace := r["trace_type"]
	return trace || eventTypes[ingest.Str(r, "type")]
}

// isRow: a history row has a sender_name, a content and is_from_me (its
// timestamp alone is too common a key to be sure).
func isRow(r ingest.Record) int {
	if !ingest.Has(r, "sender_name", "content") {
		return 0
	}
	for _, k := range []string{"role", "msg", "thread_id", "message"} {
		if _, ok := r[k]; ok {
			return 0
		}
	}
	switch {
	case ingest.Has(r, "is_from_me"):
		return 85
	case ingest.Has(r, "timestamp"):
		return 60
	}
	return 0
}

func detect(s *ingest.Sample) int {
	best := 0
	for _, r := range s.Records {
		n := 0
		if isEvent(r) {
			n = 90
		} else if s.Shape != ingest.ShapeSSE {
			n = isRow(r)
		}
		best = max(best, n)
	}
	return best
}

func importFile(ctx context.Context, s *ingest.Sample, opts ingest.Options, emit func(events.Event)) error {
	switch s.Shape {
	case ingest.ShapeSSE:
		return importStream(ctx, s.Path, opts, emit)
	case ingest.ShapeJSON:
		return importHistory(ctx, s.Path, opts, emit)
	case ingest.ShapeJSONL:
		return importLines(ctx, s.Path, opts, emit)
	}
	return fmt.Errorf("a pynchy chat is a JSON history or an SSE recording, not %s", s.Shape)
}

func emitAll(emit func(events.Event), evs []events.Event) {
	for _, ev := range evs {
		emit(ev)
	}
}

// chats counts the records of each chat, in order of first appearance.
type chats struct {
	order []string
	n     map[string]int
}

func (c *chats) add(jid string) {
	if jid == "" {
		return
	}
	if c.n == nil {
		c.n = map[string]int{}
	}
	if _, ok := c.n[jid]; !ok {
		c.order = append(c.order, jid)
	}
	c.n[jid]++
}

func (c *chats) list(unit string) string {
	var b strings.Builder
	for _, j := range c.order {
		fmt.Fprintf(&b, "  %s  (%d %ss)\n", j, c.n[j], unit)
	}
	return b.String()
}

// pick chooses the chat to import: the one asked for, or the only one.
// Records without a chat_jid belong to whichever is chosen.
func (c *chats) pick(path, want, unit string) (string, error) {
	switch {
	case want != "":
		if len(c.order) > 0 && c.n[want] == 0 {
			return "", &ingest.UsageError{Msg: fmt.Sprintf("%s holds no %ss of chat %q; its chats are:\n%s", path, unit, want, c.list(unit))}
		}
		return want, nil
	case len(c.order) > 1:
		return "", &ingest.UsageError{Msg: fmt.Sprintf("%s holds %d chats; pick one with --chat JID:\n%s", path, len(c.order), c.list(unit))}
	case len(c.order) == 1:
		return c.order[0], nil
	}
	return "", nil
}

// importStream reads a recording of /api/events in one pass. The stream is
// global: without --chat the first chat met is decoded, and a file that
// turns out to hold several is refused at the end with their list (nothing
// is printed before an import ends).
func importStream(ctx context.Context, path string, opts ingest.Options, emit func(events.Event)) error {
	var cs chats
	d := NewDecoder(opts.Chat, "frame")
	n := 0
	err := ingest.EachFrame(path, func(f events.Frame) error {
		n++
		if jid := ChatOf(f.Data); jid != "" {
			cs.add(jid)
			d.Adopt(jid)
		}
		emitAll(emit, d.DecodeAt(n, f.Data))
		return ctx.Err()
	})
	truncated := errors.Is(err, sse.ErrTruncated)
	if err != nil && !truncated {
		return err
	}
	if _, err := cs.pick(path, opts.Chat, "event"); err != nil {
		return err
	}
	if truncated {
		emit(events.Event{Kind: events.KindNotice, Level: events.LevelWarning, NoticeKind: events.NoticeInfo,
			Text: fmt.Sprintf("The recording ends inside frame %d; that frame is left out.", n+1)})
	}
	emitAll(emit, d.Flush())
	return nil
}

// importLines reads JSON lines of history rows or stream events.
func importLines(ctx context.Context, path string, opts ingest.Options, emit func(events.Event)) error {
	var cs chats
	if err := ingest.EachLine(path, func(_ int, raw []byte) error {
		cs.add(ChatOf(raw))
		return ctx.Err()
	}); err != nil {
		return err
	}
	chat, err := cs.pick(path, opts.Chat, "line")
	if err != nil {
		return err
	}
	d := NewDecoder(chat, "line")
	if err := ingest.EachLine(path, func(line int, raw []byte) error {
		emitAll(emit, d.DecodeAt(line, raw))
		return ctx.Err()
	}); err != nil {
		return err
	}
	emitAll(emit, d.Flush())
	return nil
}

// importHistory reads /api/messages: rows oldest first. A first pass
// counts chats (rows carry chat_jid only in files put together from
// several chats) and checks the order; rows out of order are sorted by
// their timestamp strings, stably, which is the one case that holds the
// whole file in memory.
func importHistory(ctx context.Context, path string, opts ingest.Options, emit func(events.Event)) error {
	var (
		cs     chats
		stamps []string
		sorted = true
		prev   string
	)
	_, err := ingest.EachElement(path, "", func(_ int, raw json.RawMessage) error {
		cs.add(ChatOf(raw))
		ts := stampOf(raw)
		if ts == "" {
			ts = prev // an undated row stays after the one before it
		}
		if ts < prev {
			sorted = false
		}
		prev = ts
		stamps = append(stamps, ts)
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	chat, err := cs.pick(path, opts.Chat, "message")
	if err != nil {
		return err
	}
	d := NewDecoder(chat, "message")
	if sorted {
		_, err = ingest.EachElement(path, "", func(i int, raw json.RawMessage) error {
			emitAll(emit, d.DecodeAt(i+1, raw))
			return ctx.Err()
		})
	} else {
		rows := make([]json.RawMessage, 0, len(stamps))
		_, err = ingest.EachElement(path, "", func(_ int, raw json.RawMessage) error {
			rows = append(rows, raw)
			return ctx.Err()
		})
		if err == nil {
			order := make([]int, len(rows))
			for i := range order {
				order[i] = i
			}
			sort.SliceStable(order, func(a, b int) bool { return stamps[order[a]] < stamps[order[b]] })
			emit(events.Event{Kind: events.KindNotice, Level: events.LevelInfo, NoticeKind: events.NoticeInfo,
				Text: "The messages were not oldest first; they are shown sorted by their timestamps."})
			for _, i := range order {
				emitAll(emit, d.DecodeAt(i+1, rows[i]))
				if err = ctx.Err(); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		return err
	}
	emitAll(emit, d.Flush())
	return nil
}

// stampOf reads a row's timestamp ("" when it has none).
func stampOf(raw []byte) string { return field(raw, "timestamp") }
