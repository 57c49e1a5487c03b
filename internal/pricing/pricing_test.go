package pricing

import (
	"math"
	"strconv"
	"testing"
)

func TestPriceLookup(t *testing.T) {
	p := DefaultPrices()
	if p.Source == "" || p.Date == "" {
		t.Fatal("the price table names no source or date")
	}
	for model, want := range map[string]string{
		"claude-sonnet-4-5-20250929":  "claude-sonnet-4-5",
		"anthropic/claude-sonnet-4-5": "claude-sonnet-4-5",
		"claude-sonnet-4-5[1m]":       "claude-sonnet-4-5",
		"claude-sonnet-4-20250514":    "claude-sonnet-4",
		"claude-opus-4-1-20250805":    "claude-opus-4-1",
		"claude-opus-4-6":             "", // another version: not opus 4's price
		"gpt-5-codex":                 "gpt-5-codex",
		"gpt-5.5":                     "",
		"gpt-5-mini-2025-08-07":       "gpt-5-mini",
		"":                            "",
	} {
		_, name, ok := p.Lookup(model)
		if name != want || ok != (want != "") {
			t.Errorf("Lookup(%q) = %q %v, want %q", model, name, ok, want)
		}
	}
	over := p.With(map[string]Price{"claude-opus-4-6": {Input: 5, Output: 25}}, "config")
	if pr, _, ok := over.Lookup("claude-opus-4-6"); !ok || pr.Input != 5 {
		t.Errorf("an override is not used: %+v %v", pr, ok)
	}
}

// TestPartialPrice: a price that leaves out cache reads does not make
// them free: the cost of requests that read the cache is unknown.
func TestPartialPrice(t *testing.T) {
	pr, err := PriceFrom(map[string]float64{"input": 5, "output": 25})
	if err != nil {
		t.Fatal(err)
	}
	if c := pr.Cost(Tokens{Input: 1e6, Output: 1e6}); c != 30 {
		t.Errorf("cost without cache = %v, want 30", c)
	}
	if c := pr.Cost(Tokens{Input: 1e6, CacheRead: 1}); !math.IsNaN(c) {
		t.Errorf("cost with an unpriced cache read = %v, want unknown (NaN)", c)
	}
	if _, err := PriceFrom(map[string]float64{"inptu": 5}); err == nil {
		t.Error("a misspelt key is accepted")
	}
	if _, err := PriceFrom(map[string]float64{"input": -1}); err == nil {
		t.Error("a negative price is accepted")
	}
}

// TestCost: a table's cost of a model's tokens, and unknown (never $0)
// for a model it has no price for.
func TestCost(t *testing.T) {
	p := DefaultPrices()
	for _, c := range []struct {
		model string
		tok   Tokens
		cost  float64
		ok    bool
	}{
		{"claude-sonnet-4-5", Tokens{Input: 1e6, Output: 1e6, CacheRead: 1e6, Cache5m: 1e6, Cache1h: 1e6}, 3 + 15 + 0.3 + 3.75 + 6, true},
		{"claude-sonnet-4-5", Tokens{Input: 1e6, Long: true}, 6, true},
		{"claude-haiku-4-5", Tokens{Long: true, Input: 1e6}, 1, true}, // no long prices: the usual ones
		{"gpt-5", Tokens{Input: 1e6, CacheRead: 1e6}, 1.25 + 0.125, true},
		{"no-such-model", Tokens{Input: 1}, 0, false},
	} {
		got, ok := p.Cost(c.model, c.tok)
		if ok != c.ok || math.Abs(got-c.cost) > 1e-9 {
			t.Errorf("Cost(%s, %+v) = %v %v, want %v %v", c.model, c.tok, got, ok, c.cost, c.ok)
		}
	}
	if LongContextSQL != strconv.Itoa(LongContext) {
		t.Errorf("LongContextSQL %s, LongContext %d", LongContextSQL, LongContext)
	}
	if !(Tokens{CacheRead: LongContext, Input: 1}).IsLong() || (Tokens{CacheRead: LongContext}).IsLong() {
		t.Error("IsLong is not input over LongContext")
	}
}
