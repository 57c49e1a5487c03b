// Package pricing is perch's price table and what requests cost at it:
// one table for the usage report (index) and the local sessions' costs
// (client/claudecode, client/codex). It imports nothing of perch's.
package pricing

import (
	_ "embed"
	"fmt"
	"math"
	"strings"

	"github.com/BurntSushi/toml"
)

// Price is a model's price in US dollars per million tokens. The long_*
// prices, when set, bill a request whose input is over LongContext tokens.
type Price struct {
	Input        float64 `toml:"input" json:"input"`
	Output       float64 `toml:"output" json:"output"`
	CacheRead    float64 `toml:"cache_read" json:"cache_read"`
	CacheWrite5m float64 `toml:"cache_write_5m" json:"cache_write_5m"`
	CacheWrite1h float64 `toml:"cache_write_1h" json:"cache_write_1h"`

	LongInput        float64 `toml:"long_input" json:"long_input,omitempty"`
	LongOutput       float64 `toml:"long_output" json:"long_output,omitempty"`
	LongCacheRead    float64 `toml:"long_cache_read" json:"long_cache_read,omitempty"`
	LongCacheWrite5m float64 `toml:"long_cache_write_5m" json:"long_cache_write_5m,omitempty"`
	LongCacheWrite1h float64 `toml:"long_cache_write_1h" json:"long_cache_write_1h,omitempty"`
}

// LongContext is the input size (cache reads and writes included) above
// which a model with long-context prices bills the whole request at them.
const LongContext = 200_000

// LongContextSQL is LongContext in SQL text (a test keeps them equal).
const LongContextSQL = "200000"

// Tokens are counts of one kind of request.
type Tokens struct {
	Input     int64 `json:"input"` // not read from or written to the cache
	Output    int64 `json:"output"`
	CacheRead int64 `json:"cache_read"`
	Cache5m   int64 `json:"cache_write_5m"`
	Cache1h   int64 `json:"cache_write_1h"`
	// Long: the requests' input was over LongContext (a priced group).
	Long bool `json:"-"`
}

// Total is every token counted.
func (t Tokens) Total() int64 { return t.Input + t.Output + t.CacheRead + t.Cache5m + t.Cache1h }

// Add adds o's counts to t's (Long is t's own).
func (t *Tokens) Add(o Tokens) {
	t.Input += o.Input
	t.Output += o.Output
	t.CacheRead += o.CacheRead
	t.Cache5m += o.Cache5m
	t.Cache1h += o.Cache1h
}

// IsLong reports whether one request of these tokens is over LongContext.
func (t Tokens) IsLong() bool { return t.Input+t.CacheRead+t.Cache5m+t.Cache1h > LongContext }

// Prices is a price table.
type Prices struct {
	Source string           `toml:"source"`
	Date   string           `toml:"date"`
	Models map[string]Price `toml:"models"`
}

//go:embed prices.toml
var embeddedPrices string

// DefaultPrices is the table perch is built with.
func DefaultPrices() Prices {
	var p Prices
	if _, err := toml.Decode(embeddedPrices, &p); err != nil {
		panic(fmt.Sprintf("pricing: the embedded price table: %v", err)) // a build mistake, caught by the tests
	}
	return p
}

// With is the table with the models of over replacing or adding to its own.
func (p Prices) With(over map[string]Price, source string) Prices {
	if len(over) == 0 {
		return p
	}
	out := Prices{Source: p.Source + "; " + source, Date: p.Date, Models: map[string]Price{}}
	for k, v := range p.Models {
		out.Models[k] = v
	}
	for k, v := range over {
		out.Models[strings.ToLower(k)] = v
	}
	return out
}

// trimDate takes a date suffix off a model's name: -20250929 or
// -2025-08-07.
func trimDate(m string) string {
	digits := func(s string) bool {
		for i := range len(s) {
			if !isDigit(s[i]) {
				return false
			}
		}
		return true
	}
	if n := len(m); n > 9 && m[n-9] == '-' && digits(m[n-8:]) {
		return m[:n-9]
	}
	if n := len(m); n > 11 && m[n-11] == '-' && m[n-6] == '-' && m[n-3] == '-' &&
		digits(m[n-10:n-6]) && digits(m[n-5:n-3]) && digits(m[n-2:]) {
		return m[:n-11]
	}
	return m
}

// Lookup finds a model's price: the longest table name that is the model's
// name, or its start followed by "-" and a word (not a version number:
// claude-opus-4-6 is not claude-opus-4).
func (p Prices) Lookup(model string) (Price, string, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.IndexByte(m, '['); i > 0 { // claude-sonnet-4-5[1m]
		m = m[:i]
	}
	m = trimDate(m) // a lookup per session per listing: no regexp
	if strings.HasPrefix(m, "claude-") {
		m = strings.ReplaceAll(m, ".", "-") // claude-sonnet-4.5, as routers write it
	}
	best := ""
	for name := range p.Models {
		if len(name) <= len(best) {
			continue
		}
		if m == name || strings.HasPrefix(m, name+"-") && len(m) > len(name)+1 && !isDigit(m[len(name)+1]) {
			best = name
		}
	}
	if best == "" {
		return Price{}, "", false
	}
	return p.Models[best], best, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Cost is what one request (or requests of one model and context size)
// costs at price: NaN when tokens of a kind the price does not give (a
// config file's price without cache_read, say) were used, since their
// cost is unknown, not $0.
func (pr Price) Cost(t Tokens) float64 {
	in, out, read, w5, w1 := pr.Input, pr.Output, pr.CacheRead, pr.CacheWrite5m, pr.CacheWrite1h
	if t.Long && pr.LongInput > 0 {
		in, out, read, w5, w1 = pr.LongInput, pr.LongOutput, pr.LongCacheRead, pr.LongCacheWrite5m, pr.LongCacheWrite1h
	}
	term := func(n int64, price float64) float64 {
		if n == 0 {
			return 0
		}
		return float64(n) * price
	}
	return (term(t.Input, in) + term(t.Output, out) + term(t.CacheRead, read) + term(t.Cache5m, w5) + term(t.Cache1h, w1)) / 1e6
}

// Cost is what requests of model and tokens cost at the table: false when
// the model has no price, or a kind of token used has none (unknown, never
// $0).
func (p Prices) Cost(model string, t Tokens) (float64, bool) {
	price, _, ok := p.Lookup(model)
	if !ok {
		return 0, false
	}
	c := price.Cost(t)
	if math.IsNaN(c) {
		return 0, false
	}
	return c, true
}

// PriceFrom reads a price as the config file writes it: a key a table
// leaves out is unknown (NaN), not free.
func PriceFrom(m map[string]float64) (Price, error) {
	nan := math.NaN()
	p := Price{nan, nan, nan, nan, nan, nan, nan, nan, nan, nan}
	fields := map[string]*float64{"input": &p.Input, "output": &p.Output, "cache_read": &p.CacheRead,
		"cache_write_5m": &p.CacheWrite5m, "cache_write_1h": &p.CacheWrite1h, "long_input": &p.LongInput,
		"long_output": &p.LongOutput, "long_cache_read": &p.LongCacheRead, "long_cache_write_5m": &p.LongCacheWrite5m,
		"long_cache_write_1h": &p.LongCacheWrite1h}
	for k, v := range m {
		f, ok := fields[k]
		if !ok {
			return p, fmt.Errorf("unknown key %q; its keys are %s", k, strings.Join(PriceKeys(), ", "))
		}
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return p, fmt.Errorf("%s = %v is not a price", k, v)
		}
		*f = v
	}
	return p, nil
}

// PriceKeys are a price's keys in the config file.
func PriceKeys() []string {
	return []string{"input", "output", "cache_read", "cache_write_5m", "cache_write_1h",
		"long_input", "long_output", "long_cache_read", "long_cache_write_5m", "long_cache_write_1h"}
}

// Split is requests' tokens by model, those over LongContext apart: what
// a cost needs of many requests (a session's).
type Split struct {
	Models map[string]Tokens `json:"models,omitempty"`
	Long   map[string]Tokens `json:"long,omitempty"` // requests over LongContext
}

// Add counts one request of model: over LongContext when its input is,
// or t.Long says so.
func (s *Split) Add(model string, t Tokens) { s.add(model, t, t.Long || t.IsLong()) }

func (s *Split) add(model string, t Tokens, long bool) {
	m := &s.Models
	if long {
		m = &s.Long
	}
	if *m == nil {
		*m = map[string]Tokens{}
	}
	sum := (*m)[model]
	sum.Add(t)
	(*m)[model] = sum
}

// Merge counts o's requests in s.
func (s *Split) Merge(o Split) {
	for model, t := range o.Models {
		s.add(model, t, false)
	}
	for model, t := range o.Long {
		s.add(model, t, true)
	}
}

// Total is every token of the split.
func (s Split) Total() int64 {
	var n int64
	for _, t := range s.Models {
		n += t.Total()
	}
	for _, t := range s.Long {
		n += t.Total()
	}
	return n
}

// SplitCost is what the split's requests cost: false (unknown, never $0)
// when any model's price, or a price a kind of token needs, is unknown,
// or there are no requests.
func (p Prices) SplitCost(s Split) (float64, bool) {
	var sum float64
	for _, g := range []struct {
		m    map[string]Tokens
		long bool
	}{{s.Models, false}, {s.Long, true}} {
		for model, t := range g.m {
			t.Long = g.long
			c, ok := p.Cost(model, t)
			if !ok {
				return 0, false
			}
			sum += c
		}
	}
	return sum, len(s.Models)+len(s.Long) > 0
}
