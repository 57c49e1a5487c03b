package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"weak"

	"github.com/perch-tui/perch/tools"
)

// BodyStore keeps the large texts of a timeline out of memory: what Put
// stored at an offset, Get gives back (package spill's File, an
// append-only file). The timeline itself does no IO beyond these calls.
type BodyStore interface {
	Put(text string) (off int64, err error)
	Get(off int64, n int) (string, error)
	// ReadAt fills p with what was put from off on (p must not reach
	// past the text it reads), for a reader that reuses its buffer.
	ReadAt(p []byte, off int64) (int, error)
}

// SpillMin is the size from which a finished text (a tool's output, an
// assistant's reply or reasoning, a user's message) goes to the timeline's
// BodyStore instead of staying in memory.
const SpillMin = 1 << 10

// GoneText is what an item shows in place of a text its store lost (the
// spill file was removed or truncated under a running perch).
const GoneText = "[output no longer available: %v]"

// ref is where a text is in a BodyStore.
type ref struct {
	store BodyStore
	off   int64
	n     int
}

func (r *ref) load() (string, error) {
	s, err := r.store.Get(r.off, r.n)
	if err != nil {
		return "", fmt.Errorf("read back %d bytes: %w", r.n, err)
	}
	return s, nil
}

// orGone is the text, or the notice that says why it is not there.
func orGone(s string, err error) string {
	if err != nil {
		return fmt.Sprintf(GoneText, errors.Unwrap(err))
	}
	return s
}

// LoadBody is the item's text (Text), read back from the store when it
// was kept there. Use it, not Text, whenever the words are shown,
// searched or exported.
func (it *Item) LoadBody() (string, error) {
	if it.x == nil || it.x.text == nil {
		return it.Text, nil
	}
	return it.x.text.load()
}

// Body is LoadBody, with a notice in place of a text the store lost.
func (it *Item) Body() string { return orGone(it.LoadBody()) }

// LoadThinking is the item's reasoning (Thinking), read back like
// LoadBody.
func (it *Item) LoadThinking() (string, error) {
	if it.x == nil || it.x.thinking == nil {
		return it.Thinking, nil
	}
	return it.x.thinking.load()
}

// ThinkingBody is LoadThinking, with a notice in place of a lost text.
func (it *Item) ThinkingBody() string { return orGone(it.LoadThinking()) }

// HasBody says whether the item has text, without reading it back.
func (it *Item) HasBody() bool { return it.Text != "" || it.x != nil && it.x.text != nil }

// HasThinking says whether the item has reasoning, without reading it
// back.
func (it *Item) HasThinking() bool {
	return it.Thinking != "" || it.x != nil && it.x.thinking != nil
}

// spilledResult is what a tool item keeps of a result whose text is in
// the store (ToolItem.spill): where the text is, and what it takes to
// make the result whole again. The item's Result holds the rest (the
// error, the exit status, the todos), with Text and the details empty;
// results that hold no more than an exit status share one per timeline
// (see Timeline.spilledShell), so that a spilled output costs only this
// record.
type spilledResult struct {
	ref
	// details: the result's details were parsed from its text as format,
	// with the call's arguments args; they are parsed again when it is
	// read back.
	details bool
	format  tools.Format
	// What Outcome needs of a command's result, so that a header never
	// reads the text back: isCmd is set when Command gave one.
	isCmd, timedOut bool
	args            json.RawMessage
	exit            *int
	// last is the copy LoadOutput made last, while anything (a view's
	// cache, an expanded body) still holds it: the several readers of one
	// frame share one read and one parse, and memory holds only what the
	// views hold.
	last weak.Pointer[ToolResult]
}

// LoadOutput is the call's result with its text and details in memory:
// Result itself unless its text was kept in the store, else a copy read
// back (details parsed again from the text). nil before a result. Like
// every method of a timeline's items, call it from the goroutine that
// owns the timeline.
func (t *ToolItem) LoadOutput() (*ToolResult, error) {
	r, sp := t.Result, t.spill
	if r == nil || sp == nil {
		return r, nil
	}
	if cp := sp.last.Value(); cp != nil {
		return cp, nil
	}
	text, err := sp.load()
	if err != nil {
		return nil, err
	}
	cp := *r
	cp.Text = text
	if sp.details {
		fillFormat(&cp, sp.format, ToolCall{Args: sp.args})
	}
	sp.last = weak.Make(&cp)
	return &cp, nil
}

// Output is LoadOutput; when the store lost the text, the copy's text is a
// notice that says so and it has no details.
func (t *ToolItem) Output() *ToolResult {
	r, err := t.LoadOutput()
	if err != nil {
		cp := *t.Result
		cp.Text = orGone("", err)
		return &cp
	}
	return r
}

// OutputText is the result's Text, read back without parsing the
// details again (an export needs only the words); a lost text is a notice
// that says so. "" before a result.
func (t *ToolItem) OutputText() string {
	r := t.Result
	if r == nil {
		return ""
	}
	if t.spill == nil {
		return r.Text
	}
	if cp := t.spill.last.Value(); cp != nil {
		return cp.Text
	}
	return orGone(t.spill.load())
}

// OutputStored says whether the result's text is in the timeline's
// BodyStore: then Result holds only the rest (the error text, the exit
// status), and ReadOutput reads the text a part at a time.
func (t *ToolItem) OutputStored() bool { return t.spill != nil }

// ReadOutput fills p with the result's text from byte at on (as much as
// fits, clipped to the text) and says how much it read: a search reads a
// long output a window at a time into one buffer instead of a copy of it
// whole. 0 before a result and past the end.
func (t *ToolItem) ReadOutput(p []byte, at int) (int, error) {
	size := t.OutputLen()
	if at < 0 || at >= size || len(p) == 0 {
		return 0, nil
	}
	p = p[:min(len(p), size-at)]
	if t.spill == nil {
		return copy(p, t.Result.Text[at:]), nil
	}
	n, err := t.spill.store.ReadAt(p, t.spill.off+int64(at))
	if err != nil {
		return n, fmt.Errorf("read back %d bytes: %w", len(p), err)
	}
	return n, nil
}

// OutputLen is the length of the result's text without reading it back.
func (t *ToolItem) OutputLen() int {
	if t.spill != nil {
		return t.spill.n
	}
	if t.Result == nil {
		return 0
	}
	return len(t.Result.Text)
}

// SpillOptions say how a timeline uses its BodyStore.
type SpillOptions struct {
	// Min is the size from which a text goes to the store (SpillMin when
	// 0).
	Min int
	// Quiet: a store that fails is not reported by a notice in the
	// transcript (an export, whose output must not change with the
	// machine, says it apart: SpillErr).
	Quiet bool
	// Hold is how many bytes of finished texts may wait in memory before
	// they go to the store, the oldest first (0: each goes as it
	// finishes). An export sets it: it writes and releases items soon
	// after they finish, and a text released while it waits is never
	// written to the file and read back. A run that goes on for hours
	// without an end still keeps no more than Hold in memory.
	Hold int
}

// heldText is a finished item's long text waiting in memory (Hold).
type heldText struct {
	it     *Item
	n      int
	result bool // the tool result's text, not the item's text and reasoning
}

// SetBodyStore makes the timeline keep finished texts in s instead of
// memory. When s fails to take a text (no file, a full disk), that text
// and every later one stay in memory, and one notice says so (see
// SpillOptions.Quiet).
func (t *Timeline) SetBodyStore(s BodyStore, o SpillOptions) {
	if o.Min <= 0 {
		o.Min = SpillMin
	}
	t.store, t.spill = s, o
}

// SpillErr is why the timeline's BodyStore stopped taking texts (they stay
// in memory since), nil while it takes them.
func (t *Timeline) SpillErr() error { return t.spillErr }

// put stores text, or reports that it stays in memory.
func (t *Timeline) put(text string) *ref { return t.putFrom(text, t.spill.Min) }

// putFrom is put for a text of at least minLen bytes.
func (t *Timeline) putFrom(text string, minLen int) *ref {
	if t.store == nil || len(text) < minLen {
		return nil
	}
	off, err := t.store.Put(text)
	if err != nil {
		t.storeFailed(err)
		return nil
	}
	return &ref{store: t.store, off: off, n: len(text)}
}

// storeFailed stops using a store that failed to take a text: what comes
// later stays in memory, and one notice says so (unless Quiet).
func (t *Timeline) storeFailed(err error) {
	t.store, t.spillErr = nil, err
	if !t.spill.Quiet {
		t.add(&Item{Kind: ItemNotice, Level: LevelWarning,
			Text: "Long outputs are kept in memory from here on: " + err.Error()})
	}
}

// spillItem moves a finished item's long text and reasoning to the store,
// or holds them in memory for now (Hold).
func (t *Timeline) spillItem(it *Item) {
	if t.store == nil || it.Open {
		return
	}
	if t.spill.Hold > 0 {
		t.hold(heldText{it: it, n: t.storable(it.Text) + t.storable(it.Thinking)})
		return
	}
	t.storeItem(it)
}

// storable is how much of a text of that length would go to the store.
func (t *Timeline) storable(text string) int {
	if len(text) < t.spill.Min {
		return 0
	}
	return len(text)
}

// hold keeps a finished text in memory, and sends the oldest held to the
// store while they pass Hold.
func (t *Timeline) hold(h heldText) {
	if h.n == 0 {
		return
	}
	t.held = append(t.held, h)
	t.heldSize += h.n
	for t.heldSize > t.spill.Hold && len(t.held) > 0 {
		t.storeHeld()
	}
}

// storeHeld sends the oldest held text to the store.
func (t *Timeline) storeHeld() {
	h := t.held[0]
	t.held[0] = heldText{}
	t.held = t.held[1:]
	t.heldSize -= h.n
	if h.result {
		t.storeResult(h.it, t.spill.Min)
	} else {
		t.storeItem(h.it)
	}
}

// unhold forgets the held texts of released items: they are out of the
// timeline, and their memory goes with them.
func (t *Timeline) unhold() {
	kept := t.held[:0]
	for _, h := range t.held {
		if int(h.it.pos) >= t.released {
			kept = append(kept, h)
		} else {
			t.heldSize -= h.n
		}
	}
	clear(t.held[len(kept):])
	t.held = kept
}

// storeItem moves a finished item's long text and reasoning to the store.
func (t *Timeline) storeItem(it *Item) {
	if t.store == nil || it.Open {
		return
	}
	if r := t.put(it.Text); r != nil {
		it.extra().text, it.Text = r, ""
	}
	if r := t.put(it.Thinking); r != nil {
		it.extra().thinking, it.Thinking = r, ""
	}
}

// setText replaces an item's text (the final form of a turn).
func (it *Item) setText(s string) {
	it.Text = s
	if it.x != nil {
		it.x.text = nil
	}
}

// setThinking replaces an item's reasoning.
func (it *Item) setThinking(s string) {
	it.Thinking = s
	if it.x != nil {
		it.x.thinking = nil
	}
}

// spillResult moves a finished tool result's text to the store, when its
// details can be parsed again from the text (details a legacy structure
// gave stay in memory with their text): the item keeps a record of where
// it is, and a Result without the text and the details. With Hold, the
// text waits in memory first.
func (t *Timeline) spillResult(it *Item) {
	if t.store != nil && t.spill.Hold > 0 {
		if r := it.Tool.Result; r != nil && it.Tool.spill == nil {
			t.hold(heldText{it: it, n: t.storable(r.Text), result: true})
		}
		return
	}
	t.storeResult(it, t.spill.Min)
}

// storeResult moves a finished tool result's text of at least minLen bytes
// to the store (see spillResult).
func (t *Timeline) storeResult(it *Item, minLen int) {
	r := it.Tool.Result
	if t.store == nil || r == nil || r.streaming || it.Tool.spill != nil || len(r.Text) < minLen {
		return
	}
	if r.hasDetails() && !r.textDetails {
		return
	}
	c := it.Tool.Command()
	rf := t.putFrom(r.Text, minLen)
	if rf == nil {
		return
	}
	sp := &spilledResult{ref: *rf}
	if c != nil {
		sp.isCmd, sp.timedOut, sp.exit = true, c.TimedOut, c.ExitCode
	}
	if r.textDetails {
		sp.details, sp.format, sp.args = true, r.format, r.detailsArgs
	}
	it.Tool.Result, it.Tool.spill = t.spilledShell(r), sp
}

// shellKey names the Results without text that spilled results share: an
// error flag and an exit status, nothing else.
type shellKey struct {
	isError, hasExit bool
	exit             int
}

// spilledShell is what stays in memory of a spilled result r: its error,
// exit status, legacy structure and todos. One that holds no more than an
// error flag and an exit status is shared by every spilled result that
// holds the same (views only read a Result, and the timeline replaces an
// item's Result rather than change it).
func (t *Timeline) spilledShell(r *ToolResult) *ToolResult {
	exit := r.Exit()
	if r.ErrorText != "" || r.Structured != nil || r.Todos != nil {
		return &ToolResult{IsError: r.IsError, ErrorText: r.ErrorText,
			Structured: r.Structured, ExitCode: exit, Todos: r.Todos}
	}
	k := shellKey{isError: r.IsError}
	if exit != nil {
		k.hasExit, k.exit = true, *exit
	}
	if sh := t.shells[k]; sh != nil {
		return sh
	}
	sh := &ToolResult{IsError: r.IsError}
	if exit != nil {
		code := *exit
		sh.ExitCode = &code
	}
	if t.shells == nil {
		t.shells = make(map[shellKey]*ToolResult)
	}
	t.shells[k] = sh
	return sh
}
