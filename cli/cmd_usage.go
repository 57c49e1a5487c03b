package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/perch-tui/perch/index"
	"github.com/perch-tui/perch/internal/pricing"
	"github.com/perch-tui/perch/sanitize"
)

func runUsage(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "usage")
	by := fs.String("by", "day", "group by day, week, month, session, project or model")
	since := fs.String("since", "", "only requests at or after: a date, a time or an age (7d)")
	until := fs.String("until", "", "only requests before: a date, a time or an age")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if err := oneOf("by", *by, "day", "week", "month", "session", "project", "model"); err != nil {
		return err
	}
	now := time.Now()
	q := index.UsageQuery{By: *by}
	var err error
	if q.Since, err = parseWhen("since", *since, now); err != nil {
		return err
	}
	if q.Until, err = parseWhen("until", *until, now); err != nil {
		return err
	}
	if q.Prices, err = env.prices(); err != nil {
		return err
	}
	ix, err := openIndex(ctx, env)
	if err != nil {
		return err
	}
	defer ix.Close()
	rows, total, err := ix.Usage(ctx, q)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			By     string           `json:"by"`
			Rows   []index.UsageRow `json:"rows"`
			Total  index.UsageRow   `json:"total"`
			Prices string           `json:"prices"`
		}{*by, rows, total, q.Prices.Source + ", " + q.Prices.Date})
	}
	if len(rows) == 0 {
		fmt.Fprintln(env.Stderr, "perch: no usage recorded (perch index reads new sessions)")
		return nil
	}
	// The first column is text, left-aligned by hand; the numbers are
	// right-aligned by the tab writer.
	label := func(r index.UsageRow) string {
		key := r.Key
		if *by == "session" {
			key = shortID(r.Key)
			if r.Title != "" {
				key += " " + clip(r.Title, 40)
			}
		}
		if key == "" {
			key = "(none)"
		}
		return sanitize.Line(key)
	}
	width := len(*by)
	for _, r := range append(rows, total) {
		width = max(width, runewidth.StringWidth(label(r)))
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-runewidth.StringWidth(s)) }
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\trequests\tinput\toutput\tcache read\tcache write 5m\tcache write 1h\tcost (perch)\tcost (source)\t\n", pad(strings.ToUpper(*by)))
	line := func(r index.UsageRow) {
		key := pad(label(r))
		out := num(r.Output)
		if r.OutputLowerBound {
			out = "≥" + out
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", key, r.Requests, num(r.Input), out, num(r.CacheRead),
			num(r.Cache5m), num(r.Cache1h), costText(r), sourceCost(r))
	}
	for _, r := range rows {
		line(r)
	}
	line(total)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "\ncost (perch): the tokens at the price table's prices (%s, %s); cost (source): what the session files themselves reported.\n", q.Prices.Source, q.Prices.Date)
	if !total.CostKnown() {
		fmt.Fprintf(env.Stdout, "no price for: %s (add it to the config file's [prices]); their cost is unknown, the figure shown is a lower bound.\n", strings.Join(total.Unknown, ", "))
	}
	if total.OutputLowerBound {
		fmt.Fprintln(env.Stdout, "≥: some replies were cut off before their output count was final; the count is what they reported.")
	}
	return nil
}

func costText(r index.UsageRow) string {
	switch {
	case r.CostKnown():
		return dollars(r.Cost)
	case r.Cost == 0:
		return "unknown"
	}
	return "≥" + dollars(r.Cost)
}

func sourceCost(r index.UsageRow) string {
	if r.SourceCost == nil {
		return "-"
	}
	return dollars(*r.SourceCost)
}

// dollars writes a cost with cents, and a small one with what a cent
// would hide.
func dollars(c float64) string {
	if c < 1 {
		return fmt.Sprintf("$%.4f", c)
	}
	return fmt.Sprintf("$%.2f", c)
}

// num writes n with thousands separators.
func num(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// prices is the embedded price table with the config file's [prices].
func (env Env) prices() (pricing.Prices, error) {
	c, err := env.config()
	if err != nil {
		return pricing.DefaultPrices(), err
	}
	return c.priceTable()
}
