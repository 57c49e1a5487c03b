package suna

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/jsonx"
	"github.com/perch-tui/perch/normalize"
)

// history holds a thread's rows so that they can be put in time order:
// the API answers newest first by default, and either order is accepted.
// Sorting needs them all; each row is kept as its raw text.
type history struct {
	rows []histRow
}

type histRow struct {
	pos    string
	raw    json.RawMessage
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
	r := histRow{pos: pos, raw: raw}
	// As json.Unmarshal fills a struct tagged created_at and sequence: the
	// last member whose key matches, ignoring case.
	var st stamp
	if jsonx.Members(raw, func(k string, v []byte) {
		switch {
		case strings.EqualFold(k, "created_at"):
			st.CreatedAt = v
		case strings.EqualFold(k, "sequence"):
			st.Sequence = v
		}
	}) {
		r.at, r.hasAt = parseTime(normalize.Str(st.CreatedAt))
		r.seq, r.hasSeq = normalize.Int(st.Sequence)
	}
	h.rows = append(h.rows, r)
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
	if first >= 0 && first != last {
		a, b := rows[first], rows[last]
		if a.at.After(b.at) || (a.at.Equal(b.at) && a.hasSeq && b.hasSeq && a.seq > b.seq) {
			slices.Reverse(rows)
		}
	}
	var at time.Time
	var seq int64
	for i := range rows {
		if rows[i].hasAt {
			if !rows[i].at.Equal(at) {
				seq = 0 // sequences count within one time
			}
			at = rows[i].at
		} else {
			rows[i].at = at
		}
		if rows[i].hasSeq {
			seq = rows[i].seq
		} else {
			rows[i].seq = seq
		}
	}
	slices.SortStableFunc(rows, func(a, b histRow) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
}

// decode feeds the ordered rows to d.
func (h *history) decode(ctx context.Context, d *Decoder, send func([]events.Event)) {
	h.order()
	for i := range h.rows {
		if ctx.Err() != nil {
			return
		}
		send(d.DecodeAt(h.rows[i].pos, h.rows[i].raw))
		h.rows[i].raw = nil // done with it
	}
	send(d.Flush())
}
