package suna

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/jsonx"
)

// history holds a thread's rows so that they can be put in time order:
// the API answers newest first by default, and either order is accepted.
// Sorting needs them all; each row is kept as its raw text — or, read in
// two passes (readHistory), only the rows of a file not in order already.
type history struct {
	rows []histRow
}

type histRow struct {
	pos    string
	raw    json.RawMessage
	idx    int // its place in the file
	at     time.Time
	hasAt  bool
	seq    int64
	hasSeq bool
}

// stamp is the part of a row the order needs.
type stamp struct {
	CreatedAt json.RawMessage `json:"created_at"`
	Sequence  json.RawMessage `json:"sequence"`
}

func (h *history) add(pos string, raw []byte) { h.keep(pos, append(json.RawMessage(nil), raw...)) }

// keep is add for a row the history may keep as it is (not a reused
// buffer).
func (h *history) keep(pos string, raw json.RawMessage) {
	h.note(pos, raw)
	h.rows[len(h.rows)-1].raw = raw
}

// note adds a row's place and time, not its text.
func (h *history) note(pos string, raw []byte) {
	st, ok := readStamp(raw)
	h.noteStamp(pos, st, ok)
}

// readStamp reads the part of a row the order needs, as json.Unmarshal
// fills a struct tagged created_at and sequence: the last member whose key
// matches, ignoring case. ok is false for a row that is not a JSON object.
func readStamp(raw []byte) (st stamp, ok bool) {
	ok = jsonx.Members(raw, func(k string, v []byte) { st.member(k, v) })
	return st, ok
}

// member takes one member of a row into st if it is one of its own.
func (st *stamp) member(k string, v []byte) {
	switch {
	case strings.EqualFold(k, "created_at"):
		st.CreatedAt = v
	case strings.EqualFold(k, "sequence"):
		st.Sequence = v
	}
}

// noteStamp is note with the row's stamp read already (ok: it was read
// from an object).
func (h *history) noteStamp(pos string, st stamp, ok bool) {
	r := stamped(st, ok)
	r.pos, r.idx = pos, len(h.rows)
	h.rows = append(h.rows, r)
}

// stamped is a row's time and sequence read from its stamp (ok: it was
// read from an object), without its place or text.
func stamped(st stamp, ok bool) histRow {
	var r histRow
	if ok {
		r.at, r.hasAt = parseTime(normalize.Str(st.CreatedAt))
		r.seq, r.hasSeq = normalize.Int(st.Sequence)
	}
	return r
}

// timeLayouts are the ways a created_at is written: Python's isoformat and
// PostgreSQL's text form.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999",
}

func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// order puts the rows oldest first: by created_at, then sequence, keeping
// the file's order (made ascending) for ties. A row without a readable
// time or sequence takes its predecessor's, so it stays where it was.
func (h *history) order() {
	rows := h.rows
	first, last := -1, -1
	for i, r := range rows {
		if r.hasAt {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first >= 0 && first != last && newestFirst(rows[first], rows[last]) {
		slices.Reverse(rows)
	}
	var c carry
	for i := range rows {
		c.fill(&rows[i])
	}
	slices.SortStableFunc(rows, histRow.cmp)
}

// newestFirst: rows whose first row with a time is a and last b are
// newest first, to be reversed before they are sorted.
func newestFirst(a, b histRow) bool {
	return a.at.After(b.at) || (a.at.Equal(b.at) && a.hasSeq && b.hasSeq && a.seq > b.seq)
}

// carry is the time and sequence the rows so far leave to the next.
type carry struct {
	at  time.Time
	seq int64
}

// fill gives r its predecessor's time or sequence where it has none, and
// leaves its own to the next row. Sequences count within one time.
func (c *carry) fill(r *histRow) {
	if r.hasAt {
		if !r.at.Equal(c.at) {
			c.seq = 0
		}
		c.at = r.at
	} else {
		r.at = c.at
	}
	if r.hasSeq {
		c.seq = r.seq
	} else {
		r.seq = c.seq
	}
}

// cmp orders filled rows by time, then sequence.
func (a histRow) cmp(b histRow) int {
	if c := a.at.Compare(b.at); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// orderCheck tells whether rows, given one at a time, are in the order
// order would put them in, keeping none of them: exactly when their filled
// times and sequences never descend. A stable sort moves a row only past
// one that sorts before it; and rows order would reverse descend
// somewhere, as their filled times go from the first's to the older last's
// (or, all equal, their sequences from the first's to the smaller last's).
type orderCheck struct {
	n        int
	c        carry
	prev     histRow // the row before, filled
	descends bool    // a row sorts before the one before it
}

func (o *orderCheck) add(r histRow) {
	o.c.fill(&r)
	if o.n > 0 && o.prev.cmp(r) > 0 {
		o.descends = true
	}
	o.prev = r
	o.n++
}

// inOrder reports whether the rows added are in order already.
func (o *orderCheck) inOrder() bool { return !o.descends }

// inOrder puts the rows in order and reports whether they were already.
func (h *history) inOrder() bool {
	h.order()
	for i, r := range h.rows {
		if r.idx != i {
			return false
		}
	}
	return true
}

// decode feeds the ordered rows to d.
func (h *history) decode(ctx context.Context, d *Decoder, send func([]events.Event)) {
	h.order()
	h.decodeOrdered(ctx, d, send)
}

// decodeOrdered feeds the rows, ordered already, to d.
func (h *history) decodeOrdered(ctx context.Context, d *Decoder, send func([]events.Event)) {
	for i := range h.rows {
		if ctx.Err() != nil {
			return
		}
		send(d.DecodeAt(h.rows[i].pos, h.rows[i].raw))
		h.rows[i].raw = nil // done with it
	}
	send(d.Flush())
}

// readHistory reads a thread's rows in two passes over the file; each
// calls its function with every row, in file order, and keep says whether
// a row's raw text may be kept as it is (or must be copied). The first pass
// reads the rows' times, keeping none of them, to learn whether they are
// oldest first already (orderCheck). Such rows are then read again and
// decoded one at a time, so that the file is never held whole; rows in
// another order are kept in the second pass and decoded in time order, as
// decode does. It returns how many rows the first pass read and the error
// each returned (the first pass's when it failed). strict: a failed first
// pass decodes nothing.
func readHistory(ctx context.Context, each func(fn func(pos string, raw []byte) error) error, keep, strict bool,
	d *Decoder, send func([]events.Event)) (int, error) {
	var o orderCheck
	err := each(func(pos string, raw []byte) error {
		o.add(stamped(readStamp(raw)))
		return ctx.Err()
	})
	n := o.n
	if err != nil && (strict || ctx.Err() != nil) {
		return n, err
	}
	inOrder := o.inOrder()
	var h history
	i := 0
	err2 := each(func(pos string, raw []byte) error {
		if i++; i > n {
			return errEnough // the first pass stopped here
		}
		if inOrder {
			send(d.DecodeAt(pos, raw))
		} else if keep {
			h.keep(pos, raw)
		} else {
			h.add(pos, raw)
		}
		return ctx.Err()
	})
	if ctx.Err() != nil {
		return n, ctx.Err()
	}
	if err == nil && err2 != nil && !errors.Is(err2, errEnough) {
		err = err2
	}
	if inOrder {
		send(d.Flush())
	} else {
		h.decode(ctx, d, send)
	}
	return n, err
}

var errEnough = errors.New("as many rows as the first pass read")
