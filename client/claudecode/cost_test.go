package claudecode

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/internal/pricing"
)

// ccReply is a transcript's assistant line with the given usage.
func ccReply(id, model string, in, out, read, write int64, lifetimes string) string {
	lt := ""
	if lifetimes != "" {
		lt = `,"cache_creation":` + lifetimes
	}
	return fmt.Sprintf(`{"type":"assistant","message":{"id":%q,"model":%q,"role":"assistant","content":[],"usage":{"input_tokens":%d,"output_tokens":%d,"cache_read_input_tokens":%d,"cache_creation_input_tokens":%d%s}}}`,
		id, model, in, out, read, write, lt) + "\n"
}

// TestSessionCost: a session's cost is each reply's tokens at its own
// model's price (cache writes at their lifetime's, a request over the long
// context at the long prices), each reply once however many lines repeat
// it; one reply of a model without a price makes the whole unknown, never
// $0, until the config file prices it.
func TestSessionCost(t *testing.T) {
	const sonnet, haiku = "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"
	m1 := ccReply("m1", sonnet, 100, 10, 1000, 300, `{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200}`) +
		ccReply("m1", sonnet, 100, 50, 1000, 300, `{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200}`) // grown
	m1Cost := (100*3 + 50*15 + 1000*0.3 + 100*3.75 + 200*6.0) / 1e6
	m2 := ccReply("m2", haiku, 10, 5, 0, 40, "") // no lifetimes: five minutes
	m2Cost := (10*1 + 5*5 + 40*1.25) / 1e6
	long := ccReply("m3", sonnet, 10, 100, 250_000, 0, "")
	longCost := (10*6 + 100*22.5 + 250_000*0.6) / 1e6
	unknown := ccReply("m4", "claude-opus-9", 1, 1, 0, 0, "")
	for _, c := range []struct {
		name   string
		text   string
		tokens int64
		cost   float64
		known  bool
		prices map[string]pricing.Price
	}{
		{"no replies", `{"type":"user","message":{"role":"user","content":"hi"}}` + "\n", 0, 0, false, nil},
		{"one model, both lifetimes", m1, 1450, m1Cost, true, nil},
		{"two models", m1 + m2, 1450 + 55, m1Cost + m2Cost, true, nil},
		{"long context", m1 + long, 1450 + 250_110, m1Cost + longCost, true, nil},
		{"a model without a price", m1 + m2 + unknown, 1450 + 55 + 2, 0, false, nil},
		{"priced by the config file", m1 + unknown, 1452, m1Cost + (1*10+1*50)/1e6, true,
			map[string]pricing.Price{"claude-opus-9": {Input: 10, Output: 50}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			l := newLocal(t.TempDir(), nil)
			if c.prices != nil {
				l.UsePrices(pricing.DefaultPrices().With(c.prices, "test"))
			}
			if _, err := l.totals.Count(path); err != nil {
				t.Fatal(err)
			}
			tokens, cost, known := l.usage(path)
			if tokens != c.tokens || known != c.known || math.Abs(cost-c.cost) > 1e-12 {
				t.Errorf("tokens %d, cost %v (known %v); want %d, %v (%v)", tokens, cost, known, c.tokens, c.cost, c.known)
			}
		})
	}
}

// TestTotalsKeptAcrossStarts: the next start reads the counts back and
// reads no transcript from its start again: one unchanged is not read at
// all, one grown is read from where the count stopped.
func TestTotalsKeptAcrossStarts(t *testing.T) {
	const sonnet = "claude-sonnet-4-5"
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	text := ccReply("m1", sonnet, 100, 10, 0, 0, "") + strings.Repeat(`{"type":"progress"}`+"\n", 100) + ccReply("m2", sonnet, 200, 20, 0, 0, "")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(t.TempDir(), "local", "claude-code.json")
	first := newLocal(dir, nil)
	first.KeepTotals(keep)
	if _, err := first.totals.Count(path); err != nil {
		t.Fatal(err)
	}
	if err := first.totals.Save(); err != nil {
		t.Fatal(err)
	}
	tokens, cost, known := first.usage(path)
	if tokens != 330 || !known {
		t.Fatalf("first start: %d tokens, cost %v %v", tokens, cost, known)
	}

	next := newLocal(dir, nil)
	next.KeepTotals(keep)
	if _, err := next.totals.Count(path); err != nil {
		t.Fatal(err)
	}
	if n := next.totals.Reads(); n != 0 {
		t.Errorf("the next start read the transcript %d times", n)
	}
	if tk, c, k := next.usage(path); tk != tokens || c != cost || !k {
		t.Errorf("the next start: %d tokens, cost %v %v; want %d, %v", tk, c, k, tokens, cost)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(ccReply("m3", sonnet, 1, 1, 0, 0, ""))
	f.Close()
	if _, err := next.totals.Count(path); err != nil {
		t.Fatal(err)
	}
	if tk, _, _ := next.usage(path); tk != 332 || next.totals.Reads() != 0 {
		t.Errorf("grown: %d tokens, %d reads from the start; want 332, 0", tk, next.totals.Reads())
	}
}

// TestSessionTotalsIncludeSubagents: a session's tokens and cost count
// its subagents' requests, which Claude Code writes to transcripts of
// their own beside the session's; a subagent on a model without a price
// makes the session's cost unknown.
func TestSessionTotalsIncludeSubagents(t *testing.T) {
	const sonnet, haiku = "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	subs := filepath.Join(dir, "s", "subagents")
	if err := os.MkdirAll(subs, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, text string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(path, ccReply("m1", sonnet, 100, 10, 0, 0, ""))
	write(filepath.Join(subs, "agent-a1.jsonl"), ccReply("s1", haiku, 20, 4, 0, 0, ""))
	l := newLocal(dir, nil)
	for _, p := range withSubagents(path) {
		if _, err := l.totals.Count(p); err != nil {
			t.Fatal(err)
		}
	}
	tokens, cost, known := l.usage(path)
	want := (100*3+10*15)/1e6 + (20*1+4*5)/1e6
	if tokens != 134 || !known || math.Abs(cost-want) > 1e-12 {
		t.Fatalf("tokens %d, cost %v (known %v); want 134, %v", tokens, cost, known, want)
	}
	write(filepath.Join(subs, "agent-a2.jsonl"), ccReply("s2", "claude-opus-9", 1, 1, 0, 0, ""))
	for _, p := range withSubagents(path) {
		if _, err := l.totals.Count(p); err != nil {
			t.Fatal(err)
		}
	}
	if tokens, _, known := l.usage(path); tokens != 136 || known {
		t.Fatalf("with an unpriced subagent: %d tokens, known %v; want 136, unknown", tokens, known)
	}
}
