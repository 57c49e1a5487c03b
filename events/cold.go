package events

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
	"weak"

	"github.com/perch-tui/perch/tools"
)

// A day-long session is a hundred thousand items; a view shows forty.
// Freeze moves the settled items far from the end out of memory: each is
// written to the timeline's BodyStore as a compact record (its long texts
// are there already) and the timeline keeps where it is. At reads one
// back when a view asks for it; while anything holds the item read back
// (a render cache, an expanded item), At gives that same item again.

// coldRef is where a frozen item's record is in the BodyStore: its
// offset (up to 1 TiB) and length (under 16 MiB) in one word, 0 for an
// item in memory.
type coldRef uint64

const coldLenBits = 24

func makeColdRef(off int64, n int) coldRef { return coldRef(uint64(off)<<coldLenBits | uint64(n)) }

func (r coldRef) off() int64 { return int64(r >> coldLenBits) }
func (r coldRef) len() int   { return int(r & (1<<coldLenBits - 1)) }

// Freeze writes the settled items more than keep items before the end to
// the BodyStore and lets them go from memory (see At). Items it cannot
// write whole stay: a result whose details came in a legacy structure. A
// timeline without a store freezes nothing.
func (t *Timeline) Freeze(keep int) {
	if t.store == nil {
		return
	}
	end := min(t.Settled(), len(t.items)-keep)
	if end <= t.frozenTo {
		return
	}
	for len(t.held) > 0 { // a record holds its texts whole: store them first
		t.storeHeld()
	}
	t.coldStore = t.store
	if n := len(t.items) - len(t.frozen); n > 0 {
		t.frozen = append(t.frozen, make([]coldRef, n)...)
	}
	for i := t.frozenTo; i < end; i++ {
		it := t.items[i]
		if it == nil || !t.freezable(it) {
			if t.store == nil {
				return // it failed taking a short output
			}
			continue
		}
		rec := appendItem(nil, it)
		if len(rec) >= 1<<coldLenBits {
			continue // a record this big (arguments of megabytes) stays
		}
		off, err := t.store.Put(string(rec))
		if err == nil && off >= 1<<(64-coldLenBits) {
			err = errors.New("the spill file passed 1 TiB")
		}
		if err != nil {
			t.storeFailed(err)
			return
		}
		t.frozen[i] = makeColdRef(off, len(rec))
		t.nfrozen++
		t.items[i] = nil
		t.forget(it)
		t.keepThawed(t.released+i, it)
	}
	t.frozenTo = max(t.frozenTo, end)
	// A Pruned mark of a frozen call is only counted: no view shows the
	// mark, and the index would grow with the session.
	t.posts.dropBelow(t.released + t.frozenTo)
}

// freezable says whether an item's record holds all of it: a tool's
// output must be in the store (a short one goes there now).
func (t *Timeline) freezable(it *Item) bool {
	if it.x != nil && (it.x.textBuf != nil || it.x.thinkBuf != nil) {
		return false
	}
	if it.Kind != ItemTool || it.Tool == nil || it.Tool.Result == nil {
		return true
	}
	if it.Tool.spill == nil {
		t.storeResult(it, 0)
	}
	return it.Tool.spill != nil
}

// forget drops an item that leaves memory from the indexes that find it
// (a late event about it makes an item of its own, as after Release).
func (t *Timeline) forget(it *Item) {
	switch it.Kind {
	case ItemTool:
		if t.tools[it.ID] == it {
			delete(t.tools, it.ID)
		}
	case ItemAssistant:
		if t.turns[it.ID] == it {
			delete(t.turns, it.ID)
		}
	}
}

// At is item i (0 ≤ i < Len): in memory, or read back from the store
// when Freeze wrote it there. A record the store lost reads back as a
// notice that says so.
func (t *Timeline) At(i int) *Item {
	it, thawed := t.peek(i)
	if thawed {
		t.keepThawed(t.released+i, it)
	}
	return it
}

// Peek is At for a reader that lets the item go at once, as a search's
// pass over the whole session does: an item it reads back is not
// remembered (At of it later reads it again). Reading fifty thousand
// items back through At made a weak pointer and a cache entry of each.
func (t *Timeline) Peek(i int) *Item {
	it, _ := t.peek(i)
	return it
}

// peek is item i, and whether it was read back from the store just now.
func (t *Timeline) peek(i int) (*Item, bool) {
	if it := t.items[i]; it != nil {
		return it, false
	}
	abs := t.released + i
	if w, ok := t.thawed[abs]; ok {
		if it := w.Value(); it != nil {
			return it, false
		}
	}
	it := t.thaw(t.frozen[i])
	it.pos = int32(abs)
	return it, true
}

// thaw reads a frozen item back.
func (t *Timeline) thaw(r coldRef) *Item { return thawFrom(t.coldStore, r) }

// thawFrom reads the item frozen at r in store back.
func thawFrom(store BodyStore, r coldRef) *Item {
	rec, err := store.Get(r.off(), r.len())
	if err == nil {
		var it *Item
		if it, err = readItem(rec, store); err == nil {
			return it
		}
	}
	return &Item{Kind: ItemNotice, Level: LevelWarning, Version: 1,
		Text: fmt.Sprintf("[item no longer available: %v]", err)}
}

// keepThawed remembers an item read back (or frozen while a view held
// it), weakly: At gives it again while anything else holds it.
func (t *Timeline) keepThawed(abs int, it *Item) {
	if t.thawed == nil {
		t.thawed = make(map[int]weak.Pointer[Item])
	}
	t.thawed[abs] = weak.Make(it)
	if len(t.thawed) > 2*t.thawedSwept+1024 {
		// Into a new map: a map does not shrink, and a search that read
		// every item back would leave one of the session's size.
		live := make(map[int]weak.Pointer[Item])
		for k, w := range t.thawed {
			if w.Value() != nil {
				live[k] = w
			}
		}
		t.thawed, t.thawedSwept = live, len(live)
	}
}

// ColdItems reads the items that were out of memory (Freeze) when the
// timeline made it. It holds its own copy of where they are and reads
// only the store, which is safe from any goroutine: a pass over a long
// session (a search) runs in a command while the timeline goes on taking
// events. The items in memory are not its: the timeline's owner reads
// them (Peek) on its own goroutine.
type ColdItems struct {
	refs  []coldRef
	store BodyStore
	base  int
}

// ColdItems returns a reader of the items frozen now.
func (t *Timeline) ColdItems() ColdItems {
	n := min(len(t.frozen), len(t.items))
	if t.nfrozen == 0 {
		n = 0
	}
	return ColdItems{refs: slices.Clone(t.frozen[:n]), store: t.coldStore, base: t.released}
}

// Has reports whether item i was out of memory when c was made.
func (c ColdItems) Has(i int) bool { return i >= 0 && i < len(c.refs) && c.refs[i] != 0 }

// Read reads item i back (Has(i) must be true), as Peek does: an item of
// its own that nothing else holds.
func (c ColdItems) Read(i int) *Item {
	it := thawFrom(c.store, c.refs[i])
	it.pos = int32(c.base + i)
	return it
}

// Frozen is how many items are out of memory (Freeze).
func (t *Timeline) Frozen() int { return t.nfrozen }

// The record: varints and length-prefixed strings, in the order below.

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendRaw keeps nil apart from empty.
func appendRaw(b []byte, r []byte) []byte {
	if r == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(r))+1)
	return append(b, r...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendIntPtr(b []byte, p *int) []byte {
	if p == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	return binary.AppendVarint(b, int64(*p))
}

// appendText writes a text kept in memory or the place of one in the store.
func appendText(b []byte, s string, r *ref) []byte {
	if r != nil {
		b = append(b, 1)
		b = binary.AppendVarint(b, r.off)
		return binary.AppendUvarint(b, uint64(r.n))
	}
	b = append(b, 0)
	return appendStr(b, s)
}

func appendCall(b []byte, c ToolCall) []byte {
	b = appendStr(b, c.ID)
	b = appendStr(b, c.Name)
	b = appendRaw(b, c.Args)
	b = appendStr(b, c.ArgsRaw)
	b = appendStr(b, c.ArgsErr)
	return appendBool(b, c.DoubleEncoded)
}

func appendItem(b []byte, it *Item) []byte {
	b = append(b, byte(it.Kind), byte(it.Level))
	b = appendBool(b, it.Incomplete)
	b = appendStr(b, it.ID)
	b = binary.AppendUvarint(b, it.Version)
	b = appendBool(b, it.Created.IsZero())
	if !it.Created.IsZero() {
		b = binary.AppendVarint(b, it.Created.UnixNano())
	}
	var text, thinking *ref
	if it.x != nil {
		text, thinking = it.x.text, it.x.thinking
	}
	b = appendText(b, it.Text, text)
	b = appendText(b, it.Thinking, thinking)
	b = appendStr(b, it.StopReason)
	b = appendStr(b, it.NoticeKind)
	b = binary.AppendUvarint(b, uint64(len(it.ToolCalls)))
	for _, c := range it.ToolCalls {
		b = appendCall(b, c)
	}
	b = appendBool(b, it.Usage != nil)
	if u := it.Usage; u != nil {
		for _, v := range []int64{u.InputTokens, u.OutputTokens, u.CachedTokens, u.TotalTokens, u.CacheWriteTokens, u.ReasoningTokens} {
			b = binary.AppendVarint(b, v)
		}
		b = binary.AppendUvarint(b, math.Float64bits(u.CostUSD))
		b = appendBool(b, u.HasCacheWrite)
		b = appendBool(b, u.HasReasoning)
		b = appendBool(b, u.HasCost)
	}
	b = appendBool(b, it.Tool != nil)
	if t := it.Tool; t != nil {
		b = appendStr(b, t.CallID)
		b = appendStr(b, t.Name)
		b = appendCall(b, t.Call)
		b = append(b, byte(t.Status))
		b = appendBool(b, t.Pruned)
		b = appendBool(b, t.Result != nil)
		if r := t.Result; r != nil { // a shell: its text is in the store (freezable)
			b = appendBool(b, r.IsError)
			b = appendStr(b, r.ErrorText)
			b = appendRaw(b, r.Structured)
			b = appendIntPtr(b, r.ExitCode)
			b = appendBool(b, r.Todos != nil)
			b = binary.AppendUvarint(b, uint64(len(r.Todos)))
			for _, td := range r.Todos {
				for _, s := range []string{td.ID, td.Content, td.Status, td.Priority, td.Notes} {
					b = appendStr(b, s)
				}
			}
			sp := t.spill
			b = binary.AppendVarint(b, sp.off)
			b = binary.AppendUvarint(b, uint64(sp.n))
			b = appendBool(b, sp.details)
			b = append(b, byte(sp.format))
			b = appendBool(b, sp.isCmd)
			b = appendBool(b, sp.timedOut)
			b = appendRaw(b, sp.args)
			b = appendIntPtr(b, sp.exit)
		}
	}
	return b
}

// errRecord is a frozen record that does not read back.
var errRecord = errors.New("a frozen item's record is damaged")

// recReader reads a record; strings are slices of it (one allocation
// for the item's texts), byte values are copies.
type recReader struct {
	s   string
	err error
}

func (r *recReader) uvarint() uint64 { return readVarint(r, binary.Uvarint) }

func (r *recReader) varint() int64 { return readVarint(r, binary.Varint) }

// readVarint reads one varint with read (binary.Uvarint or Varint).
func readVarint[T uint64 | int64](r *recReader, read func([]byte) (T, int)) T {
	if r.err != nil {
		return 0
	}
	v, n := read([]byte(r.s[:min(len(r.s), binary.MaxVarintLen64)]))
	if n <= 0 {
		r.err = errRecord
		return 0
	}
	r.s = r.s[n:]
	return v
}

func (r *recReader) byte() byte {
	if r.err != nil || len(r.s) == 0 {
		r.err = errRecord
		return 0
	}
	c := r.s[0]
	r.s = r.s[1:]
	return c
}

func (r *recReader) bool() bool { return r.byte() == 1 }

func (r *recReader) str() string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.s)) {
		r.err = errRecord
		return ""
	}
	s := r.s[:n]
	r.s = r.s[n:]
	return s
}

func (r *recReader) raw() []byte {
	n := r.uvarint()
	if r.err != nil || n == 0 {
		return nil
	}
	if n-1 > uint64(len(r.s)) {
		r.err = errRecord
		return nil
	}
	b := []byte(r.s[:n-1])
	r.s = r.s[n-1:]
	return b
}

func (r *recReader) intPtr() *int {
	if !r.bool() {
		return nil
	}
	v := int(r.varint())
	return &v
}

func (r *recReader) text(store BodyStore) (string, *ref) {
	if r.bool() {
		off := r.varint()
		n := r.uvarint()
		return "", &ref{store: store, off: off, n: int(n)}
	}
	return r.str(), nil
}

func (r *recReader) call() ToolCall {
	return ToolCall{ID: r.str(), Name: r.str(), Args: r.raw(), ArgsRaw: r.str(), ArgsErr: r.str(), DoubleEncoded: r.bool()}
}

// readItem is the item a record holds; its stored texts are read from
// store.
func readItem(rec string, store BodyStore) (*Item, error) {
	r := &recReader{s: rec}
	it := &Item{Kind: ItemKind(r.byte()), Level: NoticeLevel(r.byte())}
	it.Incomplete = r.bool()
	it.ID = r.str()
	it.Version = r.uvarint()
	if !r.bool() {
		it.Created = time.Unix(0, r.varint())
	}
	var text, thinking *ref
	it.Text, text = r.text(store)
	it.Thinking, thinking = r.text(store)
	if text != nil || thinking != nil {
		it.x = &itemExtra{text: text, thinking: thinking}
	}
	it.StopReason = r.str()
	it.NoticeKind = r.str()
	if n := r.uvarint(); n > 0 && n <= uint64(len(r.s)) {
		it.ToolCalls = make([]ToolCall, n)
		for i := range it.ToolCalls {
			it.ToolCalls[i] = r.call()
		}
	}
	if r.bool() {
		u := &Usage{InputTokens: r.varint(), OutputTokens: r.varint(), CachedTokens: r.varint(),
			TotalTokens: r.varint(), CacheWriteTokens: r.varint(), ReasoningTokens: r.varint()}
		u.CostUSD = math.Float64frombits(r.uvarint())
		u.HasCacheWrite, u.HasReasoning, u.HasCost = r.bool(), r.bool(), r.bool()
		it.Usage = u
	}
	if r.bool() {
		t := &ToolItem{CallID: r.str(), Name: r.str()}
		t.Call = r.call()
		t.Status = ToolStatus(r.byte())
		t.Pruned = r.bool()
		if r.bool() {
			res := &ToolResult{IsError: r.bool(), ErrorText: r.str(), Structured: r.raw(), ExitCode: r.intPtr()}
			hasTodos := r.bool()
			if n := r.uvarint(); hasTodos && n <= uint64(len(r.s)) {
				res.Todos = make([]Todo, n)
				for i := range res.Todos {
					res.Todos[i] = Todo{ID: r.str(), Content: r.str(), Status: r.str(), Priority: r.str(), Notes: r.str()}
				}
			}
			sp := &spilledResult{ref: ref{store: store}}
			sp.off = r.varint()
			sp.n = int(r.uvarint())
			sp.details = r.bool()
			sp.format = tools.Format(r.byte())
			sp.isCmd, sp.timedOut = r.bool(), r.bool()
			sp.args = r.raw()
			sp.exit = r.intPtr()
			t.Result, t.spill = res, sp
		}
		it.Tool = t
	}
	if r.err != nil {
		return nil, r.err
	}
	return it, nil
}
