package index

import (
	"time"

	"github.com/perch-tui/perch/internal/ingest"
)

// Billing is read from the source's own lines, not from the decoded
// events: a cost report needs, per model request, what the normalized
// conversation does not carry — the model, the request's id across every
// copy of it, the cache writes by lifetime, and whether the reply's output
// count is final — and the times of the lines. Each system reads its own
// lines (ingest.Importer.Billing, beside its decoder); the index merges
// what they say.

// request is one model request's usage, merged over its copies.
type request struct {
	key   string
	at    time.Time
	model string
	// input excludes cache reads and writes (Anthropic's meaning).
	input, output, cacheRead, cache5m, cache1h int64
	// final: a copy said why the reply stopped, so its output count is
	// the whole; otherwise the output is the count so far (a lower bound).
	final bool
	cost  *float64 // the source's own figure, when it gives one
}

// merge adds another copy of the same request: each count keeps its
// largest value (a streamed copy carries the output so far), the time its
// earliest.
func (r *request) merge(o *request) {
	r.input = max(r.input, o.input)
	r.output = max(r.output, o.output)
	r.cacheRead = max(r.cacheRead, o.cacheRead)
	r.cache5m = max(r.cache5m, o.cache5m)
	r.cache1h = max(r.cache1h, o.cache1h)
	r.final = r.final || o.final
	if r.model == "" {
		r.model = o.model
	}
	if !o.at.IsZero() && (r.at.IsZero() || o.at.Before(r.at)) {
		r.at = o.at
	}
	if o.cost != nil && (r.cost == nil || *o.cost > *r.cost) {
		r.cost = o.cost
	}
}

// fromBilling is the request a line's billing reports (the system's own
// reader, ingest.Importer.Billing), at the line's time, nil for none.
func fromBilling(b *ingest.Billing) *request {
	r := b.Request
	if r == nil {
		return nil
	}
	// A count below zero is a file's nonsense: it counts as none.
	t := r.Tokens
	return &request{key: r.Key, at: b.At, model: r.Model, input: max(t.Input, 0), output: max(t.Output, 0),
		cacheRead: max(t.CacheRead, 0), cache5m: max(t.Cache5m, 0), cache1h: max(t.Cache1h, 0), final: r.Final, cost: r.Cost}
}
