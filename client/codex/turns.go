package codex

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/idset"
)

// segment is one assistant turn being built.
type segment struct {
	id         string
	pieces     []*piece // reasoning, by item
	text       strings.Builder
	textItem   string // where the text came from: "item <id>", or "delta"/"message" (older format); "" while there is none
	calls      []events.ToolCall
	usage      *events.Usage
	stop       string
	incomplete bool
	emitted    bool // shown at least once
	dirty      bool // changed since it was last shown
}

type piece struct {
	item string
	b    strings.Builder
}

type tool struct {
	id, name string
	seg      *segment
	snap     string          // the output as last reported whole
	buf      strings.Builder // the output as reported in chunks (older format)
	done     bool
}

func (t *tool) latest() string {
	if t.snap != "" {
		return t.snap
	}
	return t.buf.String()
}

func (s *segment) thinking() string {
	parts := make([]string, 0, len(s.pieces))
	for _, p := range s.pieces {
		if p.b.Len() > 0 {
			parts = append(parts, p.b.String())
		}
	}
	return strings.Join(parts, "\n\n")
}

// piece is the reasoning of item, added when new.
func (s *segment) piece(item string) *piece {
	for _, p := range s.pieces {
		if p.item == item {
			return p
		}
	}
	p := &piece{item: item}
	s.pieces = append(s.pieces, p)
	return p
}

func (s *segment) setText(item, text string) {
	s.text.Reset()
	s.text.WriteString(text)
	s.textItem = item
}

func (s *segment) event() events.Event {
	return events.Event{Kind: events.KindAssistantMessage, ID: s.id, Text: s.text.String(), Thinking: s.thinking(),
		ToolCalls: append([]events.ToolCall(nil), s.calls...), Usage: s.usage, StopReason: s.stop,
		Incomplete: s.incomplete}
}

// show is the turn as it stands now.
func (s *segment) show() events.Event {
	s.emitted, s.dirty = true, false
	return s.event()
}

type part uint8

const (
	partText part = iota
	partThinking
	partTool
)

// segFor finds the turn an item belongs to, opening a new one (and
// closing the current one) when the item cannot join the current turn: a
// message or reasoning after the turn's message or tool calls.
func (d *Decoder) segFor(item string, p part) *segment {
	if s := d.itemSeg[item]; s != nil && item != "" {
		return s
	}
	s := d.seg
	if s == nil || (p != partTool && (s.textItem != "" || len(s.calls) > 0)) {
		d.out = append(d.out, d.closeSeg()...)
		id := item
		if p == partTool && item != "" {
			id = item + ":assistant"
		}
		if id == "" || d.used.Has(id) {
			id = d.synthID()
		}
		d.used.Add(id)
		s = &segment{id: id}
		d.seg, d.last = s, s
	}
	if item != "" && p != partTool {
		d.itemSeg[item] = s
	}
	return s
}

// grown reports a turn that grew by a delta: shown whole the first time
// (so that it stands where it began), then by the delta when live, or
// marked for showing when it closes.
func (d *Decoder) grown(s *segment, delta events.Event) []events.Event {
	switch {
	case !s.emitted:
		return []events.Event{s.show()}
	case !d.Live:
		s.dirty = true
		return nil
	}
	return []events.Event{delta}
}

// closeSeg shows the current turn's last changes, and ends it.
func (d *Decoder) closeSeg() []events.Event {
	s := d.seg
	d.seg = nil
	if s == nil || !s.dirty {
		return nil
	}
	return []events.Event{s.show()}
}

func (d *Decoder) synthID() string {
	for {
		d.msgs++
		id := "msg-" + strconv.Itoa(d.msgs)
		if !d.used.Has(id) {
			d.used.Add(id)
			return id
		}
	}
}

// key is the id of an item in this file: codex numbers items from item_0
// in every run, so a later run's ids that an earlier run used get its
// number ("r2/item_0"). Whether an earlier run used an id does not change
// within a run, so nothing is kept per item but its hash.
func (d *Decoder) key(id string) string {
	if id == "" {
		return ""
	}
	d.thisRun.Add(id)
	if d.earlier.Has(id) {
		return "r" + strconv.Itoa(d.run) + "/" + id
	}
	return id
}

// newRun starts a new codex invocation in the same file.
func (d *Decoder) newRun() []events.Event {
	out := d.closeTurn()
	d.run++
	d.earlier.AddAll(&d.thisRun)
	d.thisRun = idset.Set{}
	return out
}

// startTurn opens a codex turn.
func (d *Decoder) startTurn() []events.Event {
	out := d.closeTurn()
	d.turns++
	d.inTurn, d.failure = true, ""
	return append(out, events.Event{Kind: events.KindRunState, RunStatus: events.StatusGenerating})
}

// endTurn closes a codex turn that ended as reported.
func (d *Decoder) endTurn() []events.Event {
	out := append(d.closeSeg(), d.flushRunning()...)
	d.inTurn, d.seg, d.last = false, nil, nil
	d.forgetTurn()
	return append(out, events.Event{Kind: events.KindRunState, RunStatus: events.StatusIdle})
}

// forgetTurn drops what the decoder kept of a turn that ended as
// reported: its assistant turns (their text) and its finished tools. A
// turn's items are not reported after its end, and a file of any length
// must not keep every text it read in memory.
func (d *Decoder) forgetTurn() {
	clear(d.itemSeg)
	for k, t := range d.tools {
		if t.done {
			delete(d.tools, k)
		}
	}
}

// closeTurn ends a turn whose end was never reported: its last assistant
// turn is marked incomplete.
func (d *Decoder) closeTurn() []events.Event {
	out := d.closeSeg()
	out = append(out, d.flushRunning()...)
	if d.inTurn {
		if s := d.last; s != nil {
			s.incomplete = true
			out = append(out, s.show())
		}
		out = append(out, notice(events.LevelWarning, events.NoticeInfo,
			"The recording ends before the turn finished; what it did so far is shown."))
	}
	d.inTurn, d.seg, d.last = false, nil, nil
	return out
}

// flushRunning shows, once, the output that tools without a result
// reported so far (a live decoder has shown it as it came).
func (d *Decoder) flushRunning() []events.Event {
	var out []events.Event
	for _, t := range d.running {
		if text := t.latest(); !t.done && !d.Live && text != "" {
			out = append(out, outputDelta(t, text))
		}
	}
	d.running = nil
	return out
}

func outputDelta(t *tool, text string) events.Event {
	return events.Event{Kind: events.KindToolOutputDelta, Tool: &events.ToolEvent{Call: events.ToolCall{ID: t.id}, Name: t.name}, Text: text}
}

// Flush ends the file.
func (d *Decoder) Flush() []events.Event {
	out := append(d.out, d.closeTurn()...)
	d.out = nil
	if len(d.unknown) > 0 && !d.unknownShown {
		d.unknownShown = true
		out = append(out, d.unknownNotice())
	}
	return out
}

// finishTurn puts a turn's usage and stop reason on its last assistant
// turn (a turn of only tool calls or nothing at all gets an empty one to
// carry its usage).
func (d *Decoder) finishTurn(u *events.Usage, stop string) []events.Event {
	s := d.last
	if s == nil && u == nil {
		return nil
	}
	if s == nil {
		id := "turn-" + strconv.Itoa(d.turns)
		if d.used.Has(id) {
			id = d.synthID()
		}
		d.used.Add(id)
		s = &segment{id: id}
		d.last = s
	}
	if s.usage == nil {
		s.usage = u
	}
	s.stop = stop
	s.incomplete = false
	return []events.Event{s.show()}
}

// toolCall finds the tool item key, or creates it as a call of the
// current assistant turn.
func (d *Decoder) toolCall(key, name string, args json.RawMessage) (*tool, []events.Event) {
	if key == "" {
		key = d.synthID()
	}
	if t := d.tools[key]; t != nil {
		return t, nil
	}
	s := d.segFor(key, partTool)
	t := &tool{id: key, name: name, seg: s}
	d.tools[key] = t
	d.running = append(d.running, t)
	c := events.NewToolCall(key, name, validUTF8(args))
	s.calls = append(s.calls, c)
	if !s.emitted {
		return t, []events.Event{s.show()}
	}
	s.dirty = true
	return t, []events.Event{{Kind: events.KindPreToolCall, Tool: &events.ToolEvent{Call: c, Name: name}}}
}

// updateArgs sets arguments a call learned late (a web search's query).
func (d *Decoder) updateArgs(t *tool, args json.RawMessage) []events.Event {
	c := events.NewToolCall(t.id, t.name, validUTF8(args))
	for i := range t.seg.calls {
		if t.seg.calls[i].ID == t.id {
			if string(t.seg.calls[i].Args) == string(c.Args) {
				return nil
			}
			t.seg.calls[i] = c
			t.seg.dirty = true
		}
	}
	out := []events.Event{{Kind: events.KindPreToolCall, Tool: &events.ToolEvent{Call: c, Name: t.name}}}
	if t.seg != d.seg && t.seg.dirty { // its turn is closed: show the change now
		out = append(out, t.seg.show())
	}
	return out
}

// snapshot takes a running tool's whole output so far, and reports what
// is new when live.
func (d *Decoder) snapshot(t *tool, text string) []events.Event {
	prev := t.snap
	t.snap = text
	if !d.Live || len(text) <= len(prev) || !strings.HasPrefix(text, prev) {
		return nil
	}
	return []events.Event{outputDelta(t, text[len(prev):])}
}

func (t *tool) result(text string, isErr bool, errText string, exit *int) events.Event {
	t.done = true
	return events.Event{Kind: events.KindPostToolCall, Tool: &events.ToolEvent{
		Call: events.ToolCall{ID: t.id, Name: t.name}, Name: t.name,
		Result: &events.ToolResult{Text: text, IsError: isErr, ErrorText: errText, ExitCode: exit}}}
}

// validUTF8 replaces invalid bytes of raw JSON (they can only be inside
// its strings) with U+FFFD, as decoding would: arguments are kept raw, and
// must not carry them into the text shown.
func validUTF8(raw json.RawMessage) json.RawMessage {
	if utf8.Valid(raw) {
		return raw
	}
	return bytes.ToValidUTF8(raw, []byte("\uFFFD"))
}
