package index

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perch-tui/perch/internal/pricing"
)

// UsageQuery asks for a usage report.
type UsageQuery struct {
	// By is day, week, month, session, project or model.
	By           string
	Since, Until time.Time
	Prices       pricing.Prices
	// Location is the time zone days, weeks and months are counted in
	// (nil: local time).
	Location *time.Location
}

// UsageRow is one group of a usage report.
type UsageRow struct {
	Key      string `json:"key"`
	Title    string `json:"title,omitempty"` // by session: its title
	Requests int64  `json:"requests"`
	pricing.Tokens
	// OutputLowerBound: some replies were cut off before their output
	// count was final; Output counts what they reported.
	OutputLowerBound bool `json:"output_lower_bound,omitempty"`
	// Cost is what perch computes from the price table, for the requests
	// of known models; Unknown lists the models it has no price for (then
	// the cost is a lower bound, and shown as unknown).
	Cost    float64  `json:"cost_usd"`
	Unknown []string `json:"unpriced_models,omitempty"`
	// SourceCost is the cost the source itself reported (nil: none did).
	SourceCost *float64 `json:"source_cost_usd,omitempty"`
	Models     []string `json:"models,omitempty"`
}

// CostKnown reports whether every request of the row had a price.
func (r UsageRow) CostKnown() bool { return len(r.Unknown) == 0 }

// Usage reports tokens and cost grouped by q.By, the groups in order
// (time groups oldest first, the others by cost, highest first). Without
// a time range it reads the sums by quarter of an hour (usage_sums), a
// few rows per session, not every request.
func (ix *Index) Usage(ctx context.Context, q UsageQuery) ([]UsageRow, UsageRow, error) {
	return ix.usage(ctx, q, q.Since.IsZero() && q.Until.IsZero())
}

func (ix *Index) usage(ctx context.Context, q UsageQuery, fromSums bool) ([]UsageRow, UsageRow, error) {
	loc := q.Location
	if loc == nil {
		loc = time.Local
	}
	// Days are cut in the zone's offset of now (a report across a
	// daylight-saving change puts the requests of that hour a day off).
	_, off := time.Now().In(loc).Zone()
	// Time groups are days counted in SQL (an integer is cheap, a date
	// string per row is not), named and merged into weeks and months here.
	var group string
	var timeKey func(day int64) string
	join := ""
	switch q.By {
	case "day", "":
		timeKey = func(day int64) string { return time.Unix(day*86400, 0).UTC().Format("2006-01-02") }
	case "week":
		timeKey = func(day int64) string {
			t := time.Unix(day*86400, 0).UTC()
			return t.AddDate(0, 0, -(int(t.Weekday())+6)%7).Format("2006-01-02") // its Monday
		}
	case "month":
		timeKey = func(day int64) string { return time.Unix(day*86400, 0).UTC().Format("2006-01") }
	}
	if timeKey != nil {
		group = fmt.Sprintf("(u.at/1000 + %d) / 86400", off)
		if fromSums {
			group = fmt.Sprintf("(u.quarter*900 + %d) / 86400", off)
		}
	} else {
		join = "JOIN sessions s ON s.id = u.session"
	}
	switch q.By {
	case "day", "", "week", "month":
	case "session":
		group = "CASE WHEN s.parent != '' THEN s.parent ELSE s.sid END"
	case "project":
		group = "s.project"
	case "model":
		group = "u.model"
	default:
		return nil, UsageRow{}, fmt.Errorf("usage: unknown grouping %q (day, week, month, session, project or model)", q.By)
	}
	var where []string
	var args []any
	if !q.Since.IsZero() {
		where, args = append(where, "u.at >= ?"), append(args, q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		where, args = append(where, "u.at < ?"), append(args, q.Until.UnixMilli())
	}
	cond := ""
	if len(where) > 0 {
		cond = "WHERE " + strings.Join(where, " AND ")
	}
	query := `SELECT ` + group + `, u.model,
			u.input + u.cache_read + u.cache_5m + u.cache_1h > ` + pricing.LongContextSQL + ` AS long,
			count(*), sum(u.input), sum(u.output), sum(u.cache_read), sum(u.cache_5m), sum(u.cache_1h),
			min(u.output_final), sum(u.source_cost), count(u.source_cost)
		FROM usage u ` + join + ` ` + cond + `
		GROUP BY 1, 2, 3`
	if fromSums {
		query = `SELECT ` + group + `, u.model, u.long,
			sum(u.requests), sum(u.input), sum(u.output), sum(u.cache_read), sum(u.cache_5m), sum(u.cache_1h),
			min(u.output_final), sum(u.source_cost), sum(u.source_costs)
		FROM usage_sums u ` + join + `
		GROUP BY 1, 2, 3`
	}
	rows, err := ix.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, UsageRow{}, fmt.Errorf("usage: %w", err)
	}
	defer rows.Close()
	groups := map[string]*UsageRow{}
	var total UsageRow
	total.Key = "total"
	for rows.Next() {
		var key, model string
		var long, final, nCost int
		var n int64
		var t pricing.Tokens
		var srcCost *float64
		if err := rows.Scan(&key, &model, &long, &n, &t.Input, &t.Output, &t.CacheRead, &t.Cache5m, &t.Cache1h, &final, &srcCost, &nCost); err != nil {
			return nil, UsageRow{}, fmt.Errorf("usage: %w", err)
		}
		t.Long = long == 1
		if timeKey != nil {
			day, err := strconv.ParseInt(key, 10, 64)
			if err != nil {
				return nil, UsageRow{}, fmt.Errorf("usage: day %q: %w", key, err)
			}
			key = timeKey(day)
		}
		g := groups[key]
		if g == nil {
			g = &UsageRow{Key: key}
			groups[key] = g
		}
		for _, r := range []*UsageRow{g, &total} {
			r.Requests += n
			r.Add(t)
			r.OutputLowerBound = r.OutputLowerBound || final == 0
			if c, ok := q.Prices.Cost(model, t); ok {
				r.Cost += c
			} else {
				r.Unknown = addName(r.Unknown, model)
			}
			r.Models = addName(r.Models, model)
			if nCost > 0 && srcCost != nil {
				c := *srcCost
				if r.SourceCost != nil {
					c += *r.SourceCost
				}
				r.SourceCost = &c
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, UsageRow{}, fmt.Errorf("usage: %w", err)
	}
	out := make([]UsageRow, 0, len(groups))
	for _, g := range groups {
		out = append(out, *g)
	}
	switch q.By {
	case "session", "project", "model":
		sort.Slice(out, func(i, j int) bool {
			if out[i].Cost != out[j].Cost {
				return out[i].Cost > out[j].Cost
			}
			return out[i].Key < out[j].Key
		})
	default:
		sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	}
	if q.By == "session" {
		if err := ix.sessionTitles(ctx, out); err != nil {
			return nil, UsageRow{}, err
		}
	}
	return out, total, nil
}

func addName(list []string, name string) []string {
	if name == "" {
		name = "(model not recorded)"
	}
	for _, n := range list {
		if n == name {
			return list
		}
	}
	list = append(list, name)
	sort.Strings(list)
	return list
}

// sessionTitles fills in the titles of session rows, and the costs their
// sources reported for whole runs.
func (ix *Index) sessionTitles(ctx context.Context, rows []UsageRow) error {
	for i := range rows {
		var title string
		var runCost *float64
		err := ix.db.QueryRowContext(ctx, `SELECT coalesce(max(title), ''), sum(source_cost) FROM sessions WHERE sid=? AND parent=''`, rows[i].Key).Scan(&title, &runCost)
		if err != nil {
			return fmt.Errorf("usage: %w", err)
		}
		rows[i].Title = title
		if rows[i].SourceCost == nil && runCost != nil {
			rows[i].SourceCost = runCost
		}
	}
	return nil
}
